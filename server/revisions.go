package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/manifests"
)

// revisionMetadataBytes bounds the answers the server keeps: a few
// thousand commits. A commit never changes, so an answer is kept until
// evicted, or a day (a tag may come to point at it).
const (
	revisionMetadataBytes = 4 << 20
	revisionMetadataTTL   = 24 * time.Hour
)

func newRevisionCache() *manifests.Memory {
	return manifests.NewMemory(revisionMetadataBytes, revisionMetadataTTL)
}

// revisionName is what a revision may be written as: a SHA, a branch, a
// tag or a ref; nothing git would read as an option or a range.
var revisionName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/+-]{0,254}$`)

// revisionMetadata is GET /api/v1/applications/{name}/revisions/{revision}/metadata
// [?sourceIndex=N]: Argo CD's RevisionMetadata (author, date, tags,
// message) of a commit of the app's repository (of spec.sources[N] for a
// multi-source app), read by the control workers: the server reads no Git.
func (s *server) revisionMetadata(w http.ResponseWriter, r *http.Request) {
	_, v := s.readApp(w, r)
	if v == nil {
		return
	}
	name, rev := v.Metadata.Name, r.PathValue("revision")
	if !revisionName.MatchString(rev) || strings.Contains(rev, "..") {
		fail(w, http.StatusBadRequest, "revision %q: write a commit SHA (7 to 40 hex digits), a branch or a tag of application %q's repository", rev, name)
		return
	}
	src, ok := metadataSource(w, r, v)
	if !ok {
		return
	}
	repo := strings.TrimSpace(src.RepoURL)
	if isFullSHA(rev) {
		if b, ok := s.metadata.Get(r.Context(), repo+"@"+strings.ToLower(rev)); ok {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
			return
		}
	}
	md, err := ferryclient.RevisionMetadata(r.Context(), s.temporal,
		contract.RevisionMetadataInput{App: name, Project: v.ProjectOf(), RepoURL: repo, Revision: rev})
	if err != nil {
		typ, msg := ferryclient.ErrorType(err)
		switch typ {
		case contract.ErrRevisionNotFound, contract.ErrProjectNotFound:
			fail(w, http.StatusNotFound, "%s", msg) // it names the app, and the revision and repository or the project
		case contract.ErrProjectDenied:
			fail(w, http.StatusForbidden, "%s", msg)
		default:
			fail(w, http.StatusServiceUnavailable, "application %q: the metadata of revision %q: %s", name, rev, msg)
		}
		return
	}
	out := map[string]any{"author": md.Author, "date": md.Date.UTC().Format(time.RFC3339), "message": md.Message}
	if len(md.Tags) > 0 { // Argo CD leaves an empty list out
		out["tags"] = md.Tags
	}
	b, err := json.Marshal(out)
	if err != nil {
		fail(w, http.StatusInternalServerError, "application %q: %v", name, err)
		return
	}
	s.metadata.Put(r.Context(), repo+"@"+md.SHA, b)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// metadataSource is the source whose repository ?sourceIndex= names (0 by
// default, as in Argo CD); false after a 400 was answered.
func metadataSource(w http.ResponseWriter, r *http.Request, v *contract.View) (app.Source, bool) {
	srcs := v.SourceList()
	i := 0
	if q := r.URL.Query().Get("sourceIndex"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 || n >= len(srcs) {
			fail(w, http.StatusBadRequest, "sourceIndex=%q: application %q has %d source(s): write an index from 0 to %d", q, v.Metadata.Name, len(srcs), len(srcs)-1)
			return app.Source{}, false
		}
		i = n
	}
	if srcs[i].IsChartSource() {
		fail(w, http.StatusBadRequest, "sourceIndex=%d: source %d of application %q is Helm chart %q, whose versions have no commit metadata: name a Git source's index",
			i, i, v.Metadata.Name, srcs[i].Chart)
		return app.Source{}, false
	}
	return srcs[i], true
}

func isFullSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range strings.ToLower(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
