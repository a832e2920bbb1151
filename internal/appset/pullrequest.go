package appset

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gosimple/slug"

	"github.com/ferry-gitops/ferry/internal/scm"
)

// SecretRef names a key of a Secret of the control namespace.
type SecretRef struct {
	SecretName string `json:"secretName"`
	Key        string `json:"key"`
}

// PullRequestGenerator is Argo CD's pullRequest generator: one parameter
// set per open pull request of a repository.
type PullRequestGenerator struct {
	Github *PullRequestGitHub `json:"github,omitempty"`
	GitLab *PullRequestGitLab `json:"gitlab,omitempty"`
	Gitea  *PullRequestGitea  `json:"gitea,omitempty"`
	// Filters: an item is kept when any filter keeps it; none: all are kept.
	Filters []PullRequestFilter `json:"filters,omitempty"`
	// RequeueAfterSeconds is how often the provider is listed; default 30 minutes, as in Argo CD (the set runs at the shortest wait of its generators).
	RequeueAfterSeconds *int64 `json:"requeueAfterSeconds,omitempty"`
	// Values are rendered with each parameter set and added as values.<key> (goTemplate: .values.<key>).
	Values map[string]string `json:"values,omitempty"`
	// ContinueOnRepoNotFoundError: a repository the provider does not find generates no app instead of an error.
	ContinueOnRepoNotFoundError bool `json:"continueOnRepoNotFoundError,omitempty"`
	// Template overrides spec.template's fields for this generator's apps.
	Template *Template `json:"template,omitempty"`
}

type PullRequestGitHub struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// API is the provider's API URL (GitHub Enterprise, a self-managed GitLab, Gitea); its host goes through the worker's host policy (--render-allow-hosts).
	API string `json:"api,omitempty"`
	// TokenRef names the Secret of the control namespace (labelled argocd.argoproj.io/secret-type: scm-creds) and its key holding the API token; none: anonymous.
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// Labels: only the pull requests carrying all of them.
	Labels []string `json:"labels,omitempty"`
}

type PullRequestGitLab struct {
	Project string `json:"project"`
	// API is the provider's API URL (GitHub Enterprise, a self-managed GitLab, Gitea); its host goes through the worker's host policy (--render-allow-hosts).
	API string `json:"api,omitempty"`
	// TokenRef names the Secret of the control namespace (labelled argocd.argoproj.io/secret-type: scm-creds) and its key holding the API token; none: anonymous.
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// Labels: only the pull requests carrying all of them.
	Labels []string `json:"labels,omitempty"`
	// PullRequestState filters the merge requests by GitLab's state
	// (opened, closed, merged, locked); empty: all of them, as in Argo CD.
	PullRequestState string `json:"pullRequestState,omitempty"`
	// Insecure skips the verification of the API's TLS certificate.
	Insecure bool `json:"insecure,omitempty"`
}

type PullRequestGitea struct {
	Owner string `json:"owner"`
	Repo  string `json:"repo"`
	// API is the provider's API URL (GitHub Enterprise, a self-managed GitLab, Gitea); its host goes through the worker's host policy (--render-allow-hosts).
	API string `json:"api"`
	// TokenRef names the Secret of the control namespace (labelled argocd.argoproj.io/secret-type: scm-creds) and its key holding the API token; none: anonymous.
	TokenRef *SecretRef `json:"tokenRef,omitempty"`
	// Insecure skips the verification of the API's TLS certificate.
	Insecure bool `json:"insecure,omitempty"`
	// Labels: only the pull requests carrying all of them.
	Labels []string `json:"labels,omitempty"`
}

// PullRequestFilter keeps the pull requests whose fields match all its
// regular expressions; a pull request is kept when any filter keeps it.
type PullRequestFilter struct {
	BranchMatch       *string `json:"branchMatch,omitempty"`
	TargetBranchMatch *string `json:"targetBranchMatch,omitempty"`
	TitleMatch        *string `json:"titleMatch,omitempty"`
}

// prFilter is a compiled PullRequestFilter.
type prFilter struct{ branch, target, title *regexp.Regexp }

func (f prFilter) keeps(p scm.PullRequest) bool {
	return matches(f.branch, p.Branch) && matches(f.target, p.TargetBranch) && matches(f.title, p.Title)
}

func matches(re *regexp.Regexp, s string) bool { return re == nil || re.MatchString(s) }

// compileRegexp compiles an optional expression, naming the field in its
// error.
func compileRegexp(expr *string, field string) (*regexp.Regexp, error) {
	if expr == nil {
		return nil, nil
	}
	re, err := regexp.Compile(*expr)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not a regular expression (Go's RE2 syntax): %w", field, *expr, err)
	}
	return re, nil
}

func compilePRFilters(fs []PullRequestFilter, path string) ([]prFilter, []error) {
	var out []prFilter
	var errs []error
	for i, f := range fs {
		p := fmt.Sprintf("%s.filters[%d]", path, i)
		var c prFilter
		var err error
		if c.branch, err = compileRegexp(f.BranchMatch, p+".branchMatch"); err != nil {
			errs = append(errs, err)
		}
		if c.target, err = compileRegexp(f.TargetBranchMatch, p+".targetBranchMatch"); err != nil {
			errs = append(errs, err)
		}
		if c.title, err = compileRegexp(f.TitleMatch, p+".titleMatch"); err != nil {
			errs = append(errs, err)
		}
		out = append(out, c)
	}
	return out, errs
}

// pullRequest yields one parameter set per open pull request the
// filters keep.
func (g *generation) pullRequest(ctx context.Context, pr *PullRequestGenerator, p string) ([]Params, error) {
	p += ".pullRequest"
	filters, errs := compilePRFilters(pr.Filters, p)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if g.opts.SCM == nil {
		return nil, fmt.Errorf("%s: %w", p, errNoSCM)
	}
	client, err := g.opts.SCM.PullRequests(ctx, pr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	pulls, err := client.PullRequests(ctx)
	switch {
	case err != nil && scm.IsNotFound(err) && pr.ContinueOnRepoNotFoundError:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: %w", p, &SCMError{Err: err})
	}
	var out []Params
	for _, pull := range pulls {
		if len(filters) > 0 && !anyKeeps(filters, pull) {
			continue
		}
		ps := g.r.pullRequestParams(pull)
		if ps, err = g.r.withValues(ps, pr.Values); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, ps)
	}
	return out, nil
}

func anyKeeps(fs []prFilter, p scm.PullRequest) bool {
	for _, f := range fs {
		if f.keeps(p) {
			return true
		}
	}
	return false
}

// pullRequestParams are Argo CD's parameters of a pull request; labels
// for goTemplate only, as Argo CD gives them.
func (r renderer) pullRequestParams(pull scm.PullRequest) Params {
	ps := Params{
		"number":             strconv.FormatInt(pull.Number, 10),
		"title":              pull.Title,
		"branch":             pull.Branch,
		"branch_slug":        branchSlug(pull.Branch),
		"target_branch":      pull.TargetBranch,
		"target_branch_slug": branchSlug(pull.TargetBranch),
		"head_sha":           pull.HeadSHA,
		"head_short_sha":     shortSHA(pull.HeadSHA, 8),
		"head_short_sha_7":   shortSHA(pull.HeadSHA, 7),
		"author":             pull.Author,
	}
	if r.goTemplate {
		ps["labels"] = pull.Labels
	}
	return ps
}

// branchSlugMax leaves a branch's slug room for 13 more characters in a
// DNS label, as Argo CD does.
const branchSlugMax = 50

// branchSlug is the branch as Argo CD slugs it: '_' as '-', then
// gosimple/slug, cut at the last '-' within 50 characters.
func branchSlug(branch string) string {
	s := slug.Make(strings.ReplaceAll(branch, "_", "-"))
	if len(s) <= branchSlugMax {
		return s
	}
	for i := branchSlugMax; i >= 0; i-- {
		if s[i] == '-' {
			return s[:i]
		}
	}
	return s[:branchSlugMax]
}

func shortSHA(sha string, n int) string { return sha[:min(len(sha), n)] }
