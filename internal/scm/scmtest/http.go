package scmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
}

// segments splits an escaped path into its unescaped segments, so that
// GitLab's "group%2Fproject" stays one.
func segments(escaped string) []string {
	var out []string
	for _, s := range strings.Split(strings.Trim(escaped, "/"), "/") {
		if u, err := url.PathUnescape(s); err == nil {
			s = u
		}
		out = append(out, s)
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// page is one page of items as a request asks for it (page from 1, size
// by sizeParam, at most the server's page size), and whether more follow.
func page[T any](s *Server, r *http.Request, items []T, sizeParam string, def int) (out []T, n int, more bool) {
	q := r.URL.Query()
	n, _ = strconv.Atoi(q.Get("page"))
	n = max(n, 1)
	size, _ := strconv.Atoi(q.Get(sizeParam))
	if size <= 0 {
		size = def
	}
	if s.pageSize > 0 {
		size = min(size, s.pageSize)
	}
	from := min((n-1)*size, len(items))
	to := min(from+size, len(items))
	return items[from:to], n, to < len(items)
}

// linkNext sets a Link header to the next page, as GitHub and Gitea do.
func linkNext(w http.ResponseWriter, r *http.Request, s *Server, n int) {
	q := r.URL.Query()
	q.Set("page", strconv.Itoa(n+1))
	w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, s.URL, r.URL.EscapedPath(), q.Encode()))
}

func names(labels []string) []map[string]any {
	out := []map[string]any{}
	for i, l := range labels {
		out = append(out, map[string]any{"id": i + 1, "name": l, "color": "ededed"})
	}
	return out
}
