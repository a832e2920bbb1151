package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/rbac"
)

// appEvent is one change of an app, as Argo CD's watch event.
type appEvent struct {
	Type string         `json:"type"` // ADDED, MODIFIED or DELETED
	App  *contract.View `json:"application"`
}

// appStream is GET /api/v1/stream/applications: server-sent events, one
// per change of an app the caller may get, as Argo CD's watch
// ({"result": {"type": …, "application": …}}); first the apps as they
// are, then their changes (hub.go reads them); an app that changed twice
// before the stream wrote it is sent once, as it is now. Filters: name,
// projects, selector, appNamespace. With allowWatchBookmarks=true, as a
// Kubernetes watch asked for its initial events, a BOOKMARK annotated
// k8s.io/initial-events-end follows the first apps once every app is
// there (hub.settled): a page that listed the apps before it opened the
// stream drops those the stream did not name by then, deleted between.
func (s *server) appStream(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	q := r.URL.Query()
	sel, err := labels.Parse(q.Get("selector"))
	if err != nil {
		fail(w, http.StatusBadRequest, "selector %q: %v", q.Get("selector"), err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	bookmark := false
	if raw := q.Get("allowWatchBookmarks"); raw != "" {
		if bookmark, err = strconv.ParseBool(raw); err != nil {
			fail(w, http.StatusBadRequest, "allowWatchBookmarks=%q: write true or false", raw)
			return
		}
	}
	projects := append(q["projects"], q["project"]...)
	wanted := func(v *contract.View) bool {
		_, en := s.live.snapshot()
		name, proj, shown := v.Metadata.Name, v.ProjectOf(), s.shown(v).Metadata
		return (q.Get("name") == "" || q.Get("name") == shown.Name || q.Get("name") == name) &&
			(len(projects) == 0 || slices.Contains(projects, proj)) &&
			(q.Get("appNamespace") == "" || q.Get("appNamespace") == shown.Namespace) &&
			sel.Matches(labels.Set(v.Metadata.Labels)) &&
			en.Allowed(c.who, rbac.Request{Resource: "applications", Action: "get", Object: object(proj, name)})
	}
	wake, stop := s.hub.subscribe()
	defer stop()
	if err := s.hub.wait(r.Context()); err != nil {
		fail(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(typ string, v *contract.View) bool {
		return writeEvent(w, appEvent{Type: typ, App: v})
	}
	// sent is the number of each app's view this stream sent last, and
	// shown the project of each app it shows, for its DELETED event.
	sent := map[string]uint64{}
	shown := map[string]string{}
	for {
		ended := bookmark && s.hub.settled() // before since: the apps it settled on are sent below
		changed, gone := s.hub.since(sent)
		for _, e := range changed {
			sent[e.name] = e.seq
			_, was := shown[e.name]
			switch {
			case wanted(e.view):
				typ := "MODIFIED"
				if !was {
					typ = "ADDED"
				}
				shown[e.name] = e.view.ProjectOf()
				if !send(typ, s.shown(e.view)) {
					return
				}
			case was: // no longer the caller's to see
				delete(shown, e.name)
				if !send("DELETED", s.shown(e.view)) {
					return
				}
			}
		}
		for _, name := range gone {
			delete(sent, name)
			if proj, was := shown[name]; was {
				delete(shown, name)
				v := &contract.View{}
				v.Metadata.Name, v.Spec.Project = name, proj
				if !send("DELETED", s.shown(v)) {
					return
				}
			}
		}
		if ended {
			bookmark = false
			if !writeEvent(w, initialEventsEnd) {
				return
			}
		}
		flusher.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		}
	}
}

// initialEventsEnd is the BOOKMARK that follows a stream's first apps, as
// a Kubernetes watch marks the end of its initial events.
var initialEventsEnd = map[string]any{"type": "BOOKMARK", "application": map[string]any{
	"metadata": map[string]any{"annotations": map[string]string{"k8s.io/initial-events-end": "true"}}}}

// writeEvent writes one server-sent event of the stream.
func writeEvent(w http.ResponseWriter, result any) bool {
	b, _ := json.Marshal(map[string]any{"result": result})
	_, err := fmt.Fprintf(w, "data: %s\n\n", b)
	return err == nil
}
