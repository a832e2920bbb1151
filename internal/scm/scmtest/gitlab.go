package scmtest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// gitLab answers GitLab's REST API (docs.gitlab.com/api) under /api/v4.
type gitLab struct{ s *Server }

func (gitLab) authorized(h http.Header, token string) bool {
	return h.Get("PRIVATE-TOKEN") == token || h.Get("Authorization") == "Bearer "+token
}

func (gitLab) unauthorized() string { return "401 Unauthorized" }

func (g gitLab) serve(w http.ResponseWriter, r *http.Request, segs []string) {
	s := g.s
	q := r.URL.Query()
	switch {
	case len(segs) == 3 && segs[0] == "groups" && segs[2] == "projects":
		var list []map[string]any
		for _, repo := range s.reposOf(segs[1], q.Get("include_subgroups") == "true") {
			if t := q.Get("topic"); t != "" && !slices.Contains(repo.Topics, t) {
				continue
			}
			if a := q.Get("archived"); a != "" && (a == "true") != repo.Archived {
				continue
			}
			list = append(list, g.project(repo))
		}
		g.list(w, r, list)
	case len(segs) >= 3 && segs[0] == "projects":
		repo, ok := s.repoByID(segs[1])
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Project Not Found"})
			return
		}
		switch rest := segs[2:]; {
		case len(rest) == 1 && rest[0] == "merge_requests":
			var list []map[string]any
			for _, p := range s.pullsIn(repo.fullName(), q.Get("state")) {
				if l := q.Get("labels"); l != "" && !hasAll(p.Labels, strings.Split(l, ",")) {
					continue
				}
				list = append(list, g.mergeRequest(repo, p))
			}
			g.list(w, r, list)
		case len(rest) == 2 && rest[0] == "repository" && rest[1] == "branches":
			var list []map[string]any
			for _, b := range sortedKeys(repo.Branches) {
				list = append(list, g.branch(repo, b))
			}
			g.list(w, r, list)
		case len(rest) == 3 && rest[0] == "repository" && rest[1] == "branches":
			if _, ok := repo.Branches[rest[2]]; !ok {
				writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Branch Not Found"})
				return
			}
			writeJSON(w, http.StatusOK, g.branch(repo, rest[2]))
		case len(rest) == 3 && rest[0] == "repository" && rest[1] == "files":
			if _, ok := repo.Branches[q.Get("ref")]; !ok || !repo.hasPath(rest[2]) || repo.isDir(rest[2]) {
				writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 File Not Found"})
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"file_name": rest[2], "file_path": rest[2], "encoding": "base64", "content": "",
				"ref": q.Get("ref"), "commit_id": repo.Branches[q.Get("ref")]})
		case len(rest) == 2 && rest[0] == "repository" && rest[1] == "tree":
			p := q.Get("path")
			if _, ok := repo.Branches[q.Get("ref")]; !ok || p != "" && !repo.isDir(p) {
				writeJSON(w, http.StatusNotFound, map[string]any{"message": "404 Tree Not Found"})
				return
			}
			writeJSON(w, http.StatusOK, []map[string]any{{"id": "a1e8f8d745cc87e3a9248358d9352bb7f9a0aeba", "name": "README.md",
				"type": "blob", "path": strings.Trim(p+"/README.md", "/"), "mode": "100644"}})
		default:
			notFound(w)
		}
	default:
		notFound(w)
	}
}

// list pages as GitLab does: X-Page, X-Per-Page, X-Total, X-Total-Pages,
// and X-Next-Page (empty on the last).
func (g gitLab) list(w http.ResponseWriter, r *http.Request, list []map[string]any) {
	items, n, more := page(g.s, r, list, "per_page", 20)
	size := len(items)
	if size == 0 {
		size = 1
	}
	h := w.Header()
	h.Set("X-Page", strconv.Itoa(n))
	h.Set("X-Total", strconv.Itoa(len(list)))
	h.Set("X-Total-Pages", strconv.Itoa(max(1, (len(list)+size-1)/size)))
	h.Set("X-Next-Page", "")
	if more {
		h.Set("X-Next-Page", strconv.Itoa(n+1))
	}
	if items == nil {
		items = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, items)
}

func (g gitLab) user(name string) map[string]any {
	return map[string]any{"id": 1, "username": name, "name": name, "state": "active"}
}

// project is a project as GET /groups/:id/projects lists it.
func (g gitLab) project(r Repo) map[string]any {
	topics := r.Topics
	if topics == nil {
		topics = []string{}
	}
	return map[string]any{
		"id": r.ID, "name": r.Name, "path": r.Name, "path_with_namespace": r.fullName(), "default_branch": r.DefaultBranch,
		"ssh_url_to_repo":  "git@gitlab.com:" + r.fullName() + ".git",
		"http_url_to_repo": "https://gitlab.com/" + r.fullName() + ".git",
		"web_url":          "https://gitlab.com/" + r.fullName(),
		"topics":           topics, "tag_list": topics, "archived": r.Archived,
		"namespace": map[string]any{"id": 1, "name": r.Owner, "path": r.Owner, "kind": "group", "full_path": r.Owner},
	}
}

// mergeRequest is a merge request as GET /projects/:id/merge_requests lists it.
func (g gitLab) mergeRequest(r Repo, p Pull) map[string]any {
	state := "opened"
	if p.Closed {
		state = "closed"
	}
	labels := p.Labels
	if labels == nil {
		labels = []string{}
	}
	return map[string]any{
		"id": 5000 + p.Number, "iid": p.Number, "project_id": r.ID, "title": p.Title, "state": state,
		"target_branch": p.Target, "source_branch": p.Branch, "author": g.user(p.Author), "labels": labels,
		"sha": p.SHA, "web_url": "https://gitlab.com/" + r.fullName() + "/-/merge_requests/" + itoa(p.Number),
		"source_project_id": r.ID, "target_project_id": r.ID,
	}
}

func (g gitLab) branch(r Repo, b string) map[string]any {
	return map[string]any{"name": b, "merged": false, "protected": b == r.DefaultBranch, "default": b == r.DefaultBranch,
		"commit": map[string]any{"id": r.Branches[b], "short_id": r.Branches[b][:min(8, len(r.Branches[b]))], "title": "commit"}}
}

func hasAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}
