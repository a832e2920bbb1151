package scmtest

import (
	"net/http"
	"strconv"
)

// gitea answers Gitea's REST API (its swagger, /api/swagger) under /api/v1.
type gitea struct{ s *Server }

func (gitea) authorized(h http.Header, token string) bool {
	a := h.Get("Authorization")
	return a == "token "+token || a == "Bearer "+token
}

func (gitea) unauthorized() string { return "token is required" }

func (g gitea) serve(w http.ResponseWriter, r *http.Request, segs []string) {
	if len(segs) == 1 && segs[0] == "version" {
		writeJSON(w, http.StatusOK, map[string]any{"version": "1.24.0"})
		return
	}
	serveRepos(g.s, g, w, r, segs, func(repo Repo, rest []string) bool {
		if len(rest) == 1 && rest[0] == "labels" {
			g.list(w, r, names(repo.Topics))
			return true
		}
		return false
	})
}

// list pages as Gitea does: page and limit, X-Total-Count and a Link header.
func (g gitea) list(w http.ResponseWriter, r *http.Request, list []map[string]any) {
	items, n, more := page(g.s, r, list, "limit", 30)
	w.Header().Set("X-Total-Count", strconv.Itoa(len(list)))
	if more {
		linkNext(w, r, g.s, n)
	}
	if items == nil {
		items = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, items)
}

func (g gitea) user(login string) map[string]any {
	return map[string]any{"id": 1, "login": login, "username": login, "full_name": login}
}

// repo is a repository as GET /orgs/{org}/repos lists it.
func (g gitea) repo(r Repo) map[string]any {
	return map[string]any{
		"id": r.ID, "name": r.Name, "full_name": r.fullName(), "owner": g.user(r.Owner), "default_branch": r.DefaultBranch,
		"html_url":  "https://gitea.example.com/" + r.fullName(),
		"clone_url": "https://gitea.example.com/" + r.fullName() + ".git",
		"ssh_url":   "git@gitea.example.com:" + r.fullName() + ".git",
		"archived":  r.Archived, "empty": false, "private": false,
	}
}

// pull is a pull request as GET /repos/{owner}/{repo}/pulls lists it.
func (g gitea) pull(r Repo, p Pull) map[string]any {
	state := "open"
	if p.Closed {
		state = "closed"
	}
	return map[string]any{
		"id": 2000 + p.Number, "number": p.Number, "title": p.Title, "state": state, "user": g.user(p.Author),
		"labels":   names(p.Labels),
		"html_url": "https://gitea.example.com/" + r.fullName() + "/pulls/" + itoa(p.Number),
		"head":     map[string]any{"label": p.Branch, "ref": p.Branch, "sha": p.SHA, "repo_id": r.ID},
		"base":     map[string]any{"label": p.Target, "ref": p.Target, "sha": r.Branches[p.Target], "repo_id": r.ID},
	}
}

func (g gitea) branch(r Repo, b string) map[string]any {
	return map[string]any{"name": b, "protected": false, "commit": map[string]any{"id": r.Branches[b], "message": "commit"}}
}
