package scm

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// gitLabAPI is GitLab's public API.
const gitLabAPI = "https://gitlab.com/api/v4/"

// GitLab is GitLab's REST API (v4).
type GitLab struct {
	c *conn
	// Project is the project (ID or path) of PullRequests.
	Project string
	// Labels: only the merge requests carrying all of them.
	Labels []string
	// State of the merge requests (opened, closed, merged, locked);
	// empty: all, as GitLab answers without it.
	State string
	// Group is the group (ID or path) of Repos.
	Group            string
	IncludeSubgroups bool
	IncludeShared    bool
	IncludeArchived  bool
	// Topic: only the projects with it.
	Topic       string
	AllBranches bool
}

// NewGitLab connects to cfg.API, to which /api/v4/ is added unless
// given (as GitLab's own client does), or gitlab.com.
func NewGitLab(cfg Config) (*GitLab, error) {
	api := gitLabAPI
	if cfg.API != "" {
		api = cfg.API
		if u, err := url.Parse(cfg.API); err == nil {
			if !strings.HasSuffix(u.Path, "/") {
				u.Path += "/"
			}
			if !strings.HasSuffix(u.Path, "api/v4/") {
				u.Path += "api/v4/"
			}
			api = u.String()
		}
	}
	c, err := newConn(cfg, api, func(h http.Header) { h.Set("PRIVATE-TOKEN", cfg.Token) })
	if err != nil {
		return nil, err
	}
	return &GitLab{c: c}, nil
}

// gitLabPages follows GitLab's X-Next-Page header.
func gitLabPages[T any](ctx context.Context, g *GitLab, what, path string, query url.Values, each func(T) error) error {
	query.Set("per_page", "100")
	for n := 1; ; n++ {
		var page T
		h, err := g.c.get(ctx, what, path, query, &page)
		if err != nil {
			return err
		}
		if err := each(page); err != nil {
			return err
		}
		next := h.Get("X-Next-Page")
		if next == "" {
			return nil
		}
		if _, err := strconv.Atoi(next); err != nil || n >= maxPages {
			return fmt.Errorf("%s: bad or endless X-Next-Page %q", what, next)
		}
		query.Set("page", next)
	}
}

type gitLabMR struct {
	IID          int64    `json:"iid"`
	Title        string   `json:"title"`
	SourceBranch string   `json:"source_branch"`
	TargetBranch string   `json:"target_branch"`
	SHA          string   `json:"sha"`
	Labels       []string `json:"labels"`
	Author       struct {
		Username string `json:"username"`
	} `json:"author"`
}

// PullRequests lists the merge requests of Project
// (GET /projects/:id/merge_requests), with labels and state.
func (g *GitLab) PullRequests(ctx context.Context) ([]PullRequest, error) {
	what := "list the merge requests of GitLab project " + g.Project
	q := url.Values{}
	if len(g.Labels) > 0 {
		q.Set("labels", strings.Join(g.Labels, ","))
	}
	if g.State != "" {
		q.Set("state", g.State)
	}
	var out []PullRequest
	err := gitLabPages(ctx, g, what, "projects/"+escape(g.Project)+"/merge_requests", q, func(page []gitLabMR) error {
		for _, m := range page {
			if len(m.Labels) == 0 {
				m.Labels = nil // as the other providers give none
			}
			out = append(out, PullRequest{Number: m.IID, Title: m.Title, Branch: m.SourceBranch, TargetBranch: m.TargetBranch,
				HeadSHA: m.SHA, Labels: m.Labels, Author: m.Author.Username})
		}
		return nil
	})
	return out, err
}

type gitLabProject struct {
	ID            int64    `json:"id"`
	Path          string   `json:"path"`
	DefaultBranch string   `json:"default_branch"`
	SSHURL        string   `json:"ssh_url_to_repo"`
	HTTPURL       string   `json:"http_url_to_repo"`
	Topics        []string `json:"topics"`
	TagList       []string `json:"tag_list"`
	Namespace     struct {
		FullPath string `json:"full_path"`
	} `json:"namespace"`
}

// Repos lists the projects of Group (GET /groups/:id/projects).
func (g *GitLab) Repos(ctx context.Context, cloneProtocol string) ([]Repository, error) {
	what := "list the projects of GitLab group " + g.Group
	q := url.Values{"include_subgroups": {strconv.FormatBool(g.IncludeSubgroups)}, "with_shared": {strconv.FormatBool(g.IncludeShared)}}
	if g.Topic != "" {
		q.Set("topic", g.Topic)
	}
	// Argo CD documents includeArchivedRepos as "archived ones too";
	// GitLab lists every project without archived, the archived ones
	// alone with archived=true.
	if !g.IncludeArchived {
		q.Set("archived", "false")
	}
	var out []Repository
	err := gitLabPages(ctx, g, what, "groups/"+escape(g.Group)+"/projects", q, func(page []gitLabProject) error {
		for _, p := range page {
			u, err := cloneURL(cloneProtocol, p.SSHURL, p.HTTPURL)
			if err != nil {
				return err
			}
			labels := p.Topics
			if len(labels) == 0 {
				labels = p.TagList
			}
			out = append(out, Repository{Organization: p.Namespace.FullPath, Repository: p.Path, URL: u, Branch: p.DefaultBranch,
				Labels: labels, ID: p.ID})
		}
		return nil
	})
	return out, err
}

type gitLabBranch struct {
	Name   string `json:"name"`
	Commit struct {
		ID string `json:"id"`
	} `json:"commit"`
}

// Branches is the project at its default branch
// (GET /projects/:id/repository/branches/:branch), or at each branch with
// AllBranches (GET /projects/:id/repository/branches); none when GitLab
// finds none.
func (g *GitLab) Branches(ctx context.Context, r Repository) ([]Repository, error) {
	base := fmt.Sprintf("projects/%d/repository/branches", r.ID)
	what := fmt.Sprintf("list the branches of GitLab project %s/%s", r.Organization, r.Repository)
	if !g.AllBranches {
		var b gitLabBranch
		if ok, err := g.c.found(ctx, what, base+"/"+escape(r.Branch), nil, &b); !ok {
			return nil, err
		}
		return []Repository{atBranch(r, b.Name, b.Commit.ID)}, nil
	}
	var out []Repository
	err := gitLabPages(ctx, g, what, base, url.Values{}, func(page []gitLabBranch) error {
		for _, b := range page {
			out = append(out, atBranch(r, b.Name, b.Commit.ID))
		}
		return nil
	})
	if IsNotFound(err) {
		return nil, nil
	}
	return out, err
}

// HasPath asks for the file (GET /projects/:id/repository/files/:path),
// then for the directory (GET /projects/:id/repository/tree?path=).
func (g *GitLab) HasPath(ctx context.Context, r Repository, p string) (bool, error) {
	what := fmt.Sprintf("look for %s in GitLab project %s/%s at %s", p, r.Organization, r.Repository, r.Branch)
	p = strings.Trim(p, "/")
	if ok, err := g.c.found(ctx, what, fmt.Sprintf("projects/%d/repository/files/%s", r.ID, escape(p)), url.Values{"ref": {r.Branch}}, nil); ok || err != nil {
		return ok, err
	}
	var entries []struct{}
	return g.c.found(ctx, what, fmt.Sprintf("projects/%d/repository/tree", r.ID), url.Values{"path": {p}, "ref": {r.Branch}}, &entries)
}

var (
	_ PullRequests = (*GitLab)(nil)
	_ Repositories = (*GitLab)(nil)
)
