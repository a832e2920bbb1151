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
	switch {
	case g.Github != nil:
		p := g.Github
		cfg, err := c.config(ctx, p.API, p.TokenRef, false)
		if err != nil {
			return nil, fmt.Errorf("github.%w", err)
		}
		gh, err := scm.NewGitHub(cfg)
		if err != nil {
			return nil, fmt.Errorf("github.%w", err)
		}
		gh.Owner, gh.Repo, gh.Labels = p.Owner, p.Repo, p.Labels
		return gh, nil
	case g.GitLab != nil:
		p := g.GitLab
		cfg, err := c.config(ctx, p.API, p.TokenRef, p.Insecure)
		if err != nil {
			return nil, fmt.Errorf("gitlab.%w", err)
		}
		gl, err := scm.NewGitLab(cfg)
		if err != nil {
			return nil, fmt.Errorf("gitlab.%w", err)
		}
		gl.Project, gl.Labels, gl.State = p.Project, p.Labels, p.PullRequestState
		return gl, nil
	case g.Gitea != nil:
		p := g.Gitea
		cfg, err := c.config(ctx, p.API, p.TokenRef, p.Insecure)
		if err != nil {
			return nil, fmt.Errorf("gitea.%w", err)
		}
		gt, err := scm.NewGitea(cfg)
		if err != nil {
			return nil, fmt.Errorf("gitea.%w", err)
		}
		gt.Owner, gt.Repo, gt.Labels = p.Owner, p.Repo, p.Labels
		return gt, nil
	}
	return nil, errors.New("no provider: give github, gitlab or gitea")
}

// Repositories is the client of the generator's provider.
func (c *SCMClients) Repositories(ctx context.Context, g *SCMProviderGenerator) (scm.Repositories, error) {
	switch {
	case g.Github != nil:
		p := g.Github
		cfg, err := c.config(ctx, p.API, p.TokenRef, false)
		if err != nil {
			return nil, fmt.Errorf("github.%w", err)
		}
		gh, err := scm.NewGitHub(cfg)
		if err != nil {
			return nil, fmt.Errorf("github.%w", err)
		}
		gh.Organization, gh.AllBranches, gh.ExcludeArchived = p.Organization, p.AllBranches, p.ExcludeArchivedRepos
		return gh, nil
	case g.Gitlab != nil:
		p := g.Gitlab
		cfg, err := c.config(ctx, p.API, p.TokenRef, p.Insecure)
		if err != nil {
			return nil, fmt.Errorf("gitlab.%w", err)
		}
		gl, err := scm.NewGitLab(cfg)
		if err != nil {
			return nil, fmt.Errorf("gitlab.%w", err)
		}
		gl.Group, gl.IncludeSubgroups, gl.AllBranches, gl.Topic = p.Group, p.IncludeSubgroups, p.AllBranches, p.Topic
		gl.IncludeShared = p.IncludeSharedProjects == nil || *p.IncludeSharedProjects
		gl.IncludeArchived = p.IncludeArchivedRepos
		return gl, nil
	case g.Gitea != nil:
		p := g.Gitea
		cfg, err := c.config(ctx, p.API, p.TokenRef, p.Insecure)
		if err != nil {
			return nil, fmt.Errorf("gitea.%w", err)
		}
		gt, err := scm.NewGitea(cfg)
		if err != nil {
			return nil, fmt.Errorf("gitea.%w", err)
		}
		gt.Owner, gt.AllBranches, gt.ExcludeArchived = p.Owner, p.AllBranches, p.ExcludeArchivedRepos
		return gt, nil
	}
	return nil, errors.New("no provider: give github, gitlab or gitea")
}
