package scm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// gitHubAPI is GitHub's public API.
const gitHubAPI = "https://api.github.com/"

// GitHub is GitHub's REST API, or a GitHub Enterprise server's.
type GitHub struct {
	c *conn
	// Owner and Repo are the repository of PullRequests.
	Owner, Repo string
	// Labels: only the pull requests carrying all of them.
	Labels []string
	// Organization is the organization of Repos.
	Organization string
	// AllBranches: Branches lists every branch, not the default one alone.
	AllBranches bool
	// ExcludeArchived: Repos leaves archived repositories out.
	ExcludeArchived bool
}

// NewGitHub connects to cfg.API, an Enterprise server's URL to which
// /api/v3/ is added unless given (as GitHub's own client does), or
// api.github.com.
func NewGitHub(cfg Config) (*GitHub, error) {
	api := gitHubAPI
	if cfg.API != "" {
		u, err := url.Parse(cfg.API)
		if err == nil {
			if !strings.HasSuffix(u.Path, "/") {
				u.Path += "/"
			}
			if !strings.HasSuffix(u.Path, "/api/v3/") && !strings.HasPrefix(u.Host, "api.") && !strings.Contains(u.Host, ".api.") {
				u.Path += "api/v3/"
			}
			api = u.String()
		} else {
			api = cfg.API
		}
	}
	c, err := newConn(cfg, api, func(h http.Header) {
		h.Set("Authorization", "Bearer "+cfg.Token)
		h.Set("Accept", "application/vnd.github+json")
	})
	if err != nil {
		return nil, err
	}
	return &GitHub{c: c}, nil
}

type gitHubPull struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	Head   struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
}

// PullRequests lists the open pull requests of Owner/Repo
// (GET /repos/{owner}/{repo}/pulls), every page.
func (g *GitHub) PullRequests(ctx context.Context) ([]PullRequest, error) {
	what := fmt.Sprintf("list the pull requests of GitHub repository %s/%s", g.Owner, g.Repo)
	var out []PullRequest
	err := pages(ctx, g.c, what, "repos/"+escape(g.Owner)+"/"+escape(g.Repo)+"/pulls", url.Values{"per_page": {"100"}, "state": {"open"}},
		func(page []gitHubPull) error {
			for _, p := range page {
				var labels []string
				for _, l := range p.Labels {
					labels = append(labels, l.Name)
				}
				if !hasAll(labels, g.Labels) {
					continue
				}
				out = append(out, PullRequest{Number: p.Number, Title: p.Title, Branch: p.Head.Ref, TargetBranch: p.Base.Ref,
					HeadSHA: p.Head.SHA, Labels: labels, Author: p.User.Login})
			}
			return nil
		})
	return out, err
}

type gitHubRepo struct {
	ID            int64    `json:"id"`
	Name          string   `json:"name"`
	DefaultBranch string   `json:"default_branch"`
	SSHURL        string   `json:"ssh_url"`
	CloneURL      string   `json:"clone_url"`
	Archived      bool     `json:"archived"`
	Topics        []string `json:"topics"`
	Owner         struct {
		Login string `json:"login"`
	} `json:"owner"`
}

// Repos lists the repositories of Organization (GET /orgs/{org}/repos).
func (g *GitHub) Repos(ctx context.Context, cloneProtocol string) ([]Repository, error) {
	what := "list the repositories of GitHub organization " + g.Organization
	var out []Repository
	err := pages(ctx, g.c, what, "orgs/"+escape(g.Organization)+"/repos", url.Values{"per_page": {"100"}},
		func(page []gitHubRepo) error {
			for _, r := range page {
				u, err := cloneURL(cloneProtocol, r.SSHURL, r.CloneURL)
				if err != nil {
					return err
				}
				if g.ExcludeArchived && r.Archived {
					continue
				}
				out = append(out, Repository{Organization: r.Owner.Login, Repository: r.Name, URL: u, Branch: r.DefaultBranch,
					Labels: r.Topics, ID: r.ID})
			}
			return nil
		})
	return out, err
}

type gitHubBranch struct {
	Name   string `json:"name"`
	Commit struct {
		SHA string `json:"sha"`
	} `json:"commit"`
}

// Branches is the repository at its default branch
// (GET /repos/{owner}/{repo}/branches/{branch}; none if it has none), or
// at each branch with AllBranches (GET /repos/{owner}/{repo}/branches).
func (g *GitHub) Branches(ctx context.Context, r Repository) ([]Repository, error) {
	repoPath := "repos/" + escape(r.Organization) + "/" + escape(r.Repository) + "/branches"
	what := fmt.Sprintf("list the branches of GitHub repository %s/%s", r.Organization, r.Repository)
	if !g.AllBranches {
		var b gitHubBranch
		if ok, err := g.c.found(ctx, what, repoPath+"/"+escape(r.Branch), nil, &b); !ok {
			return nil, err
		}
		return []Repository{atBranch(r, b.Name, b.Commit.SHA)}, nil
	}
	var out []Repository
	err := pages(ctx, g.c, what, repoPath, url.Values{"per_page": {"100"}}, func(page []gitHubBranch) error {
		for _, b := range page {
			out = append(out, atBranch(r, b.Name, b.Commit.SHA))
		}
		return nil
	})
	return out, err
}

// HasPath asks GET /repos/{owner}/{repo}/contents/{path}?ref=branch.
func (g *GitHub) HasPath(ctx context.Context, r Repository, p string) (bool, error) {
	what := fmt.Sprintf("look for %s in GitHub repository %s/%s at %s", p, r.Organization, r.Repository, r.Branch)
	return g.c.found(ctx, what, "repos/"+escape(r.Organization)+"/"+escape(r.Repository)+"/contents/"+escapePath(p),
		url.Values{"ref": {r.Branch}}, nil)
}

var (
	_ PullRequests = (*GitHub)(nil)
	_ Repositories = (*GitHub)(nil)
)
