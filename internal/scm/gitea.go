package scm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Gitea is Gitea's REST API (v1); it has no public default.
type Gitea struct {
	c *conn
	// Owner and Repo are the repository of PullRequests; Owner is the
	// organization of Repos.
	Owner, Repo string
	// Labels: only the pull requests carrying all of them.
	Labels          []string
	AllBranches     bool
	ExcludeArchived bool
}

// giteaPageSize is the page size asked for (Gitea's default maximum).
const giteaPageSize = 50

// NewGitea connects to cfg.API, the server's URL, under /api/v1/.
func NewGitea(cfg Config) (*Gitea, error) {
	if cfg.API == "" {
		return nil, errors.New("api: required for Gitea: the server's URL, such as https://gitea.example.com")
	}
	api := strings.TrimSuffix(cfg.API, "/")
	if !strings.HasSuffix(api, "/api/v1") {
		api += "/api/v1"
	}
	c, err := newConn(cfg, api, func(h http.Header) { h.Set("Authorization", "token "+cfg.Token) })
	if err != nil {
		return nil, err
	}
	return &Gitea{c: c}, nil
}

// giteaPages asks page after page (page, limit) until one is short, or
// follows the Link header when Gitea gives one.
func giteaPages[T any](ctx context.Context, g *Gitea, what, path string, query url.Values, each func([]T) error) error {
	query.Set("limit", strconv.Itoa(giteaPageSize))
	for n := 1; n <= maxPages; n++ {
		query.Set("page", strconv.Itoa(n))
		var page []T
		h, err := g.c.get(ctx, what, path, query, &page)
		if err != nil {
			return err
		}
		if err := each(page); err != nil {
			return err
		}
		if _, more := nextLink(h); !more && len(page) < giteaPageSize || len(page) == 0 {
			return nil
		}
	}
	return fmt.Errorf("%s: more than %d pages", what, maxPages)
}

type giteaPull struct {
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
// (GET /repos/{owner}/{repo}/pulls?state=open).
func (g *Gitea) PullRequests(ctx context.Context) ([]PullRequest, error) {
	what := fmt.Sprintf("list the pull requests of Gitea repository %s/%s", g.Owner, g.Repo)
	var out []PullRequest
	err := giteaPages(ctx, g, what, "repos/"+escape(g.Owner)+"/"+escape(g.Repo)+"/pulls", url.Values{"state": {"open"}},
		func(page []giteaPull) error {
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

type giteaRepo struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	DefaultBranch string `json:"default_branch"`
	SSHURL        string `json:"ssh_url"`
	HTMLURL       string `json:"html_url"`
	Archived      bool   `json:"archived"`
}

// Repos lists the repositories of the organization Owner
// (GET /orgs/{org}/repos), each with its labels
// (GET /repos/{owner}/{repo}/labels), as Argo CD reads them; https
// clones from the repository's html_url, as Argo CD's does.
func (g *Gitea) Repos(ctx context.Context, cloneProtocol string) ([]Repository, error) {
	what := "list the repositories of Gitea organization " + g.Owner
	var out []Repository
	err := giteaPages(ctx, g, what, "orgs/"+escape(g.Owner)+"/repos", url.Values{}, func(page []giteaRepo) error {
		for _, r := range page {
			u, err := cloneURL(cloneProtocol, r.SSHURL, r.HTMLURL)
			if err != nil {
				return err
			}
			if g.ExcludeArchived && r.Archived {
				continue
			}
			labels := []string{}
			err = giteaPages(ctx, g, fmt.Sprintf("list the labels of Gitea repository %s/%s", g.Owner, r.Name),
				"repos/"+escape(g.Owner)+"/"+escape(r.Name)+"/labels", url.Values{}, func(ls []struct {
					Name string `json:"name"`
				}) error {
					for _, l := range ls {
						labels = append(labels, l.Name)
					}
					return nil
				})
			if err != nil {
				return err
			}
			out = append(out, Repository{Organization: g.Owner, Repository: r.Name, URL: u, Branch: r.DefaultBranch, Labels: labels, ID: r.ID})
		}
		return nil
	})
	return out, err
}

type giteaBranch struct {
	Name   string `json:"name"`
	Commit struct {
		ID string `json:"id"`
	} `json:"commit"`
}

// Branches is the repository at its default branch
// (GET /repos/{owner}/{repo}/branches/{branch}), or at each branch with
// AllBranches (GET /repos/{owner}/{repo}/branches).
func (g *Gitea) Branches(ctx context.Context, r Repository) ([]Repository, error) {
	base := "repos/" + escape(g.Owner) + "/" + escape(r.Repository) + "/branches"
	what := fmt.Sprintf("list the branches of Gitea repository %s/%s", g.Owner, r.Repository)
	if !g.AllBranches {
		var b giteaBranch
		if ok, err := g.c.found(ctx, what, base+"/"+escape(r.Branch), nil, &b); !ok {
			return nil, err
		}
		return []Repository{atBranch(r, r.Branch, b.Commit.ID)}, nil
	}
	var out []Repository
	err := giteaPages(ctx, g, what, base, url.Values{}, func(page []giteaBranch) error {
		for _, b := range page {
			out = append(out, atBranch(r, b.Name, b.Commit.ID))
		}
		return nil
	})
	return out, err
}

// HasPath asks GET /repos/{owner}/{repo}/contents/{path}?ref=branch: a
// file or a directory.
func (g *Gitea) HasPath(ctx context.Context, r Repository, p string) (bool, error) {
	what := fmt.Sprintf("look for %s in Gitea repository %s/%s at %s", p, r.Organization, r.Repository, r.Branch)
	return g.c.found(ctx, what, "repos/"+escape(r.Organization)+"/"+escape(r.Repository)+"/contents/"+escapePath(p),
		url.Values{"ref": {r.Branch}}, nil)
}

var (
	_ PullRequests = (*Gitea)(nil)
	_ Repositories = (*Gitea)(nil)
)
