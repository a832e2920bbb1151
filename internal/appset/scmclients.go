package appset

import (
	"context"
	"errors"
	"fmt"

	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/scm"
)

// SCM opens the provider clients of the pullRequest and scmProvider
// generators, with the token their tokenRef names.
type SCM interface {
	PullRequests(ctx context.Context, g *PullRequestGenerator) (scm.PullRequests, error)
	Repositories(ctx context.Context, g *SCMProviderGenerator) (scm.Repositories, error)
}

// errNoSCM: generation without a way to reach the providers (the CLI).
var errNoSCM = errors.New("the SCM providers are read by the control worker, which reads the tokenRef Secrets: apply the set and see `ferry appset get`")

// SCMError is a provider that could not be listed: its API failed or
// answered what it does not document. The set keeps its apps and says why.
type SCMError struct{ Err error }

func (e *SCMError) Error() string { return e.Err.Error() }
func (e *SCMError) Unwrap() error { return e.Err }

// IsSCMError reports whether err is (or wraps) a provider's failure.
func IsSCMError(err error) bool {
	var se *SCMError
	return errors.As(err, &se)
}

// SCMClients is SCM over the providers' REST APIs (internal/scm).
type SCMClients struct {
	// Token reads the key a tokenRef names; nil: a tokenRef cannot be read.
	Token func(ctx context.Context, ref SecretRef) (string, error)
	// Hosts is the host policy the API URLs and their dials go through.
	Hosts *netpolicy.Hosts
}

var _ SCM = (*SCMClients)(nil)

func (c *SCMClients) config(ctx context.Context, api string, ref *SecretRef, insecure bool) (scm.Config, error) {
	cfg := scm.Config{API: api, Hosts: c.Hosts, HTTP: scm.HTTPClient(c.Hosts, insecure)}
	if ref == nil {
		return cfg, nil
	}
	if c.Token == nil {
		return cfg, fmt.Errorf("tokenRef: this worker reads no Secrets (no control namespace)")
	}
	tok, err := c.Token(ctx, *ref)
	if err != nil {
		return cfg, fmt.Errorf("tokenRef: %w", err)
	}
	cfg.Token = tok
	return cfg, nil
}

// PullRequests is the client of the generator's provider.
func (c *SCMClients) PullRequests(ctx context.Context, g *PullRequestGenerator) (scm.PullRequests, error) {
	switch p := g; {
	case p.Github != nil:
		gh, err := c.github(ctx, p.Github.API, p.Github.TokenRef)
		if err == nil {
			gh.Owner, gh.Repo, gh.Labels = p.Github.Owner, p.Github.Repo, p.Github.Labels
		}
		return gh, err
	case p.GitLab != nil:
		gl, err := c.gitlab(ctx, p.GitLab.API, p.GitLab.TokenRef, p.GitLab.Insecure)
		if err == nil {
			gl.Project, gl.Labels, gl.State = p.GitLab.Project, p.GitLab.Labels, p.GitLab.PullRequestState
		}
		return gl, err
	case p.Gitea != nil:
		gt, err := c.gitea(ctx, p.Gitea.API, p.Gitea.TokenRef, p.Gitea.Insecure)
		if err == nil {
			gt.Owner, gt.Repo, gt.Labels = p.Gitea.Owner, p.Gitea.Repo, p.Gitea.Labels
		}
		return gt, err
	}
	return nil, errNoProvider
}

// Repositories is the client of the generator's provider.
func (c *SCMClients) Repositories(ctx context.Context, g *SCMProviderGenerator) (scm.Repositories, error) {
	switch p := g; {
	case p.Github != nil:
		gh, err := c.github(ctx, p.Github.API, p.Github.TokenRef)
		if err == nil {
			gh.Organization, gh.AllBranches, gh.ExcludeArchived = p.Github.Organization, p.Github.AllBranches, p.Github.ExcludeArchivedRepos
		}
		return gh, err
	case p.Gitlab != nil:
		gl, err := c.gitlab(ctx, p.Gitlab.API, p.Gitlab.TokenRef, p.Gitlab.Insecure)
		if err == nil {
			gl.Group, gl.IncludeSubgroups, gl.AllBranches, gl.Topic = p.Gitlab.Group, p.Gitlab.IncludeSubgroups, p.Gitlab.AllBranches, p.Gitlab.Topic
			gl.IncludeShared = p.Gitlab.IncludeSharedProjects == nil || *p.Gitlab.IncludeSharedProjects
			gl.IncludeArchived = p.Gitlab.IncludeArchivedRepos
		}
		return gl, err
	case p.Gitea != nil:
		gt, err := c.gitea(ctx, p.Gitea.API, p.Gitea.TokenRef, p.Gitea.Insecure)
		if err == nil {
			gt.Owner, gt.AllBranches, gt.ExcludeArchived = p.Gitea.Owner, p.Gitea.AllBranches, p.Gitea.ExcludeArchivedRepos
		}
		return gt, err
	}
	return nil, errNoProvider
}

var errNoProvider = errors.New("no provider: give github, gitlab or gitea")

// github, gitlab and gitea connect to one provider, naming it in errors.
func (c *SCMClients) github(ctx context.Context, api string, ref *SecretRef) (*scm.GitHub, error) {
	cfg, err := c.config(ctx, api, ref, false)
	if err != nil {
		return nil, fmt.Errorf("github.%w", err)
	}
	gh, err := scm.NewGitHub(cfg)
	if err != nil {
		return nil, fmt.Errorf("github.%w", err)
	}
	return gh, nil
}

func (c *SCMClients) gitlab(ctx context.Context, api string, ref *SecretRef, insecure bool) (*scm.GitLab, error) {
	cfg, err := c.config(ctx, api, ref, insecure)
	if err != nil {
		return nil, fmt.Errorf("gitlab.%w", err)
	}
	gl, err := scm.NewGitLab(cfg)
	if err != nil {
		return nil, fmt.Errorf("gitlab.%w", err)
	}
	return gl, nil
}

func (c *SCMClients) gitea(ctx context.Context, api string, ref *SecretRef, insecure bool) (*scm.Gitea, error) {
	cfg, err := c.config(ctx, api, ref, insecure)
	if err != nil {
		return nil, fmt.Errorf("gitea.%w", err)
	}
	gt, err := scm.NewGitea(cfg)
	if err != nil {
		return nil, fmt.Errorf("gitea.%w", err)
	}
	return gt, nil
}
