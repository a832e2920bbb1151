package scmtest

import (
	"net/http"
	"strings"
)

// shape is how GitHub or Gitea writes its objects and pages its lists:
// their repository endpoints share one layout.
type shape interface {
	list(w http.ResponseWriter, r *http.Request, items []map[string]any)
	repo(r Repo) map[string]any
	pull(r Repo, p Pull) map[string]any
	branch(r Repo, b string) map[string]any
}

// serveRepos answers the endpoints GitHub and Gitea share:
// /orgs/{org}/repos, and /repos/{owner}/{repo}/ pulls (state open by
// default), branches, branches/{branch}, contents/{path}?ref=. extra
// answers a repository's other endpoints; false: 404.
func serveRepos(s *Server, f shape, w http.ResponseWriter, r *http.Request, segs []string,
	extra func(repo Repo, rest []string) bool) {
	switch {
	case len(segs) == 3 && segs[0] == "orgs" && segs[2] == "repos":
		var list []map[string]any
		for _, repo := range s.reposOf(segs[1], false) {
			list = append(list, f.repo(repo))
		}
		f.list(w, r, list)
		return
	case len(segs) < 4 || segs[0] != "repos":
		notFound(w)
		return
	}
	repo, ok := s.repo(segs[1] + "/" + segs[2])
	if !ok {
		notFound(w)
		return
	}
	q := r.URL.Query()
	switch rest := segs[3:]; {
	case len(rest) == 1 && rest[0] == "pulls":
		state := q.Get("state")
		if state == "" {
			state = "open"
		}
		var list []map[string]any
		for _, p := range s.pullsIn(repo.fullName(), state) {
			list = append(list, f.pull(repo, p))
		}
		f.list(w, r, list)
	case len(rest) == 1 && rest[0] == "branches":
		var list []map[string]any
		for _, b := range sortedKeys(repo.Branches) {
			list = append(list, f.branch(repo, b))
		}
		f.list(w, r, list)
	case len(rest) == 2 && rest[0] == "branches":
		if _, ok := repo.Branches[rest[1]]; !ok {
			notFound(w)
			return
		}
		writeJSON(w, http.StatusOK, f.branch(repo, rest[1]))
	case len(rest) >= 2 && rest[0] == "contents":
		p := strings.Join(rest[1:], "/")
		if _, ok := repo.Branches[q.Get("ref")]; !ok || !repo.hasPath(p) {
			notFound(w)
			return
		}
		if repo.isDir(p) {
			// A directory: its entries.
			writeJSON(w, http.StatusOK, []map[string]any{{"type": "file", "name": "README.md", "path": p + "/README.md"}})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"type": "file", "encoding": "base64", "name": p, "path": p, "content": ""})
	default:
		if !extra(repo, rest) {
			notFound(w)
		}
	}
}
