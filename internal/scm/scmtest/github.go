package scmtest

import (
	"net/http"
	"slices"
)

// gitHub answers GitHub's REST API (docs.github.com/rest) under /api/v3.
type gitHub struct{ s *Server }

func (g gitHub) authorized(h http.Header, token string) bool {
	a := h.Get("Authorization")
	return a == "Bearer "+token || a == "token "+token
}

func (gitHub) unauthorized() string { return "Bad credentials" }

func (g gitHub) serve(w http.ResponseWriter, r *http.Request, segs []string) {
	serveRepos(g.s, g, w, r, segs, func(Repo, []string) bool { return false })
}

func (g gitHub) list(w http.ResponseWriter, r *http.Request, list []map[string]any) {
	items, n, more := page(g.s, r, list, "per_page", 30)
	if more {
		linkNext(w, r, g.s, n)
	}
	if items == nil {
		items = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, items)
}

func (g gitHub) user(login string) map[string]any {
	return map[string]any{"login": login, "id": 1, "type": "User", "html_url": "https://github.com/" + login}
}

// repo is a repository as GET /orgs/{org}/repos lists it.
func (g gitHub) repo(r Repo) map[string]any {
	topics := r.Topics
	if topics == nil {
		topics = []string{}
	}
	return map[string]any{
		"id": r.ID, "node_id": "R_" + itoa(r.ID), "name": r.Name, "full_name": r.fullName(), "private": false,
		"owner":          map[string]any{"login": r.Owner, "id": 1, "type": "Organization"},
		"html_url":       "https://github.com/" + r.fullName(),
		"clone_url":      "https://github.com/" + r.fullName() + ".git",
		"ssh_url":        "git@github.com:" + r.fullName() + ".git",
		"default_branch": r.DefaultBranch, "archived": r.Archived, "topics": topics, "visibility": "public",
	}
}

// pull is a pull request as GET /repos/{owner}/{repo}/pulls lists it.
func (g gitHub) pull(r Repo, p Pull) map[string]any {
	state := "open"
	if p.Closed {
		state = "closed"
	}
	return map[string]any{
		"id": 1000 + p.Number, "number": p.Number, "state": state, "title": p.Title, "user": g.user(p.Author),
		"labels":   names(p.Labels),
		"html_url": "https://github.com/" + r.fullName() + "/pull/" + itoa(p.Number),
		"head": map[string]any{"label": r.Owner + ":" + p.Branch, "ref": p.Branch, "sha": p.SHA, "user": g.user(r.Owner),
			"repo": g.repo(r)},
		"base": map[string]any{"label": r.Owner + ":" + p.Target, "ref": p.Target, "sha": r.Branches[p.Target], "user": g.user(r.Owner),
			"repo": g.repo(r)},
	}
}

func (g gitHub) branch(r Repo, b string) map[string]any {
	return map[string]any{"name": b, "protected": false,
		"commit": map[string]any{"sha": r.Branches[b], "url": "https://api.github.com/repos/" + r.fullName() + "/commits/" + r.Branches[b]}}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
