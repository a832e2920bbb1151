package appset

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ferry-gitops/ferry/internal/scm"
)

// SCMProviderGenerator is Argo CD's scmProvider generator: one parameter
// set per repository of an organization (per branch with allBranches)
// that the filters keep.
type SCMProviderGenerator struct {
	Github *SCMGitHub `json:"github,omitempty"`
	Gitlab *SCMGitLab `json:"gitlab,omitempty"`
	Gitea  *SCMGitea  `json:"gitea,omitempty"`
	// Filters: an item is kept when any filter keeps it; none: all are kept.
	Filters []SCMFilter `json:"filters,omitempty"`
	// CloneProtocol picks each repository's url: ssh (default) or https.
	CloneProtocol string `json:"cloneProtocol,omitempty"`
	// RequeueAfterSeconds is how often the provider is listed; default 30 minutes, as in Argo CD (the set runs at the shortest wait of its generators).
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// Values are rendered with each parameter set and added as values.<key> (goTemplate: .values.<key>).
	Values map[string]string `json:"values,omitempty"`
	// Template overrides spec.template's fields for this generator's apps.
	Template *Template `json:"template,omitempty"`
}

type SCMGitHub struct {
	Organization string `json:"organization"`
	// API is the provider's API URL (GitHub Enterprise, a self-managed GitLab, Gitea); its host goes through the worker's host policy (--render-allow-hosts).
	API string `json:"api,omitempty"`
	// TokenRef names the Secret of the control namespace (labelled argocd.argoproj.io/secret-type: scm-creds) and its key holding the API token; none: anonymous.
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// AllBranches: a parameter set per branch, not for the default branch alone.
	AllBranches bool `json:"allBranches,omitempty"`
	// ExcludeArchivedRepos leaves archived repositories out.
	ExcludeArchivedRepos bool `json:"excludeArchivedRepos,omitempty"`
}

type SCMGitLab struct {
	Group string `json:"group"`
	// IncludeSubgroups lists the projects of the group's subgroups too.
	IncludeSubgroups bool `json:"includeSubgroups,omitempty"`
	// API is the provider's API URL (GitHub Enterprise, a self-managed GitLab, Gitea); its host goes through the worker's host policy (--render-allow-hosts).
	API string `json:"api,omitempty"`
	// TokenRef names the Secret of the control namespace (labelled argocd.argoproj.io/secret-type: scm-creds) and its key holding the API token; none: anonymous.
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// AllBranches: a parameter set per branch, not for the default branch alone.
	AllBranches bool `json:"allBranches,omitempty"`
	// Insecure skips the verification of the API's TLS certificate.
	Insecure bool `json:"insecure,omitempty"`
	// IncludeSharedProjects: nil is true, as in Argo CD.
	IncludeSharedProjects *bool `json:"includeSharedProjects,omitempty"`
	// Topic: only the projects with this topic.
	Topic string `json:"topic,omitempty"`
	// IncludeArchivedRepos lists archived projects too.
	IncludeArchivedRepos bool `json:"includeArchivedRepos,omitempty"`
}

type SCMGitea struct {
	Owner string `json:"owner"`
	// API is the provider's API URL (GitHub Enterprise, a self-managed GitLab, Gitea); its host goes through the worker's host policy (--render-allow-hosts).
	API string `json:"api"`
	// TokenRef names the Secret of the control namespace (labelled argocd.argoproj.io/secret-type: scm-creds) and its key holding the API token; none: anonymous.
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// AllBranches: a parameter set per branch, not for the default branch alone.
	AllBranches bool `json:"allBranches,omitempty"`
	// Insecure skips the verification of the API's TLS certificate.
	Insecure bool `json:"insecure,omitempty"`
	// ExcludeArchivedRepos leaves archived repositories out.
	ExcludeArchivedRepos bool `json:"excludeArchivedRepos,omitempty"`
}

// SCMFilter keeps the repositories that match all its conditions; a
// repository is kept when any filter keeps it.
type SCMFilter struct {
	RepositoryMatch *string  `json:"repositoryMatch,omitempty"`
	PathsExist      []string `json:"pathsExist,omitempty"`
	PathsDoNotExist []string `json:"pathsDoNotExist,omitempty"`
	LabelMatch      *string  `json:"labelMatch,omitempty"`
	BranchMatch     *string  `json:"branchMatch,omitempty"`
}

// scmFilter is a compiled SCMFilter. As in Argo CD, a filter with only
// repositoryMatch or labelMatch is applied to the repositories before
// their branches are listed; one with paths or branchMatch to each
// branch, after.
type scmFilter struct {
	repo, label, branch  *regexp.Regexp
	pathsExist, pathsNot []string
	perBranch            bool
}

func compileSCMFilters(fs []SCMFilter, path string) ([]scmFilter, []error) {
	var out []scmFilter
	var errs []error
	for i, f := range fs {
		p := fmt.Sprintf("%s.filters[%d]", path, i)
		c := scmFilter{pathsExist: f.PathsExist, pathsNot: f.PathsDoNotExist}
		var err error
		if c.repo, err = compileRegexp(f.RepositoryMatch, p+".repositoryMatch"); err != nil {
			errs = append(errs, err)
		}
		if c.label, err = compileRegexp(f.LabelMatch, p+".labelMatch"); err != nil {
			errs = append(errs, err)
		}
		if c.branch, err = compileRegexp(f.BranchMatch, p+".branchMatch"); err != nil {
			errs = append(errs, err)
		}
		c.perBranch = f.PathsExist != nil || f.PathsDoNotExist != nil || f.BranchMatch != nil
		out = append(out, c)
	}
	return out, errs
}

func (f scmFilter) keeps(ctx context.Context, c scm.Repositories, r scm.Repository) (bool, error) {
	if !matches(f.repo, r.Repository) || !matches(f.branch, r.Branch) {
		return false, nil
	}
	if f.label != nil && !slices.ContainsFunc(r.Labels, f.label.MatchString) {
		return false, nil
	}
	for _, p := range f.pathsExist {
		if ok, err := c.HasPath(ctx, r, strings.TrimRight(p, "/")); err != nil || !ok {
			return false, err
		}
	}
	for _, p := range f.pathsNot {
		if ok, err := c.HasPath(ctx, r, strings.TrimRight(p, "/")); err != nil || ok {
			return false, err
		}
	}
	return true, nil
}

// keep applies the filters of one stage (perBranch or not) to repos.
func keep(ctx context.Context, c scm.Repositories, fs []scmFilter, perBranch bool, repos []scm.Repository) ([]scm.Repository, error) {
	var stage []scmFilter
	for _, f := range fs {
		if f.perBranch == perBranch && (f.perBranch || f.repo != nil || f.label != nil) {
			stage = append(stage, f)
		}
	}
	if len(stage) == 0 {
		return repos, nil
	}
	var out []scm.Repository
	for _, r := range repos {
		for _, f := range stage {
			ok, err := f.keeps(ctx, c, r)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, r)
				break
			}
		}
	}
	return out, nil
}

// scmProvider yields one parameter set per repository and branch the
// filters keep.
func (g *generation) scmProvider(ctx context.Context, sp *SCMProviderGenerator, p string) ([]Params, error) {
	p += ".scmProvider"
	filters, errs := compileSCMFilters(sp.Filters, p)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if g.opts.SCM == nil {
		return nil, fmt.Errorf("%s: %w", p, errNoSCM)
	}
	client, err := g.opts.SCM.Repositories(ctx, sp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	repos, err := listRepos(ctx, client, filters, sp.CloneProtocol)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, &SCMError{Err: err})
	}
	var out []Params
	for _, r := range repos {
		ps := Params{
			"organization":     r.Organization,
			"repository":       r.Repository,
			"repository_id":    r.ID,
			"url":              r.URL,
			"branch":           r.Branch,
			"branchNormalized": SanitizeName(r.Branch),
			"sha":              r.SHA,
			"short_sha":        shortSHA(r.SHA, 8),
			"short_sha_7":      shortSHA(r.SHA, 7),
			"labels":           strings.Join(r.Labels, ","),
		}
		if ps, err = g.r.withValues(ps, sp.Values); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, ps)
	}
	return out, nil
}

// listRepos lists the repositories, keeps those the repository filters
// keep, lists their branches and keeps those the branch filters keep.
func listRepos(ctx context.Context, c scm.Repositories, fs []scmFilter, cloneProtocol string) ([]scm.Repository, error) {
	repos, err := c.Repos(ctx, cloneProtocol)
	if err != nil {
		return nil, err
	}
	if repos, err = keep(ctx, c, fs, false, repos); err != nil {
		return nil, err
	}
	var branches []scm.Repository
	for _, r := range repos {
		bs, err := c.Branches(ctx, r)
		if err != nil {
			return nil, err
		}
		branches = append(branches, bs...)
	}
	return keep(ctx, c, fs, true, branches)
}
