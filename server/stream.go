package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/rbac"
)

// appEvent is one change of an app, as Argo CD's watch event.
type appEvent struct {
	Type string         `json:"type"` // ADDED, MODIFIED or DELETED
	App  *contract.View `json:"application"`
	proj string
}

// watchers are the streams open now, to which the poller (follow.go)
// sends the apps' changes.
type watchers struct {
	mu   sync.Mutex
	subs map[chan appEvent]bool
}

// subscribe adds a watcher.
func (s *server) subscribe() (chan appEvent, func()) {
	w := &s.watchers
	ch := make(chan appEvent, 4096) // a push that moves every app of a large fleet at once
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs == nil {
		w.subs = map[chan appEvent]bool{}
	}
	w.subs[ch] = true
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs, ch)
	}
}

// watched says whether a stream is open.
func (w *watchers) watched() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.subs) > 0
}

func (w *watchers) send(e appEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.subs {
		select {
		case ch <- e:
		default: // a watcher that does not read loses events, not the others
		}
	}
}

// appStream is GET /api/v1/stream/applications: server-sent events, one
// per change of an app the caller may get, as Argo CD's watch
// ({"result": {"type": …, "application": …}}); first the apps as they
// are, then their changes. Filters: name, projects, selector, appNamespace.
func (s *server) appStream(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	q := r.URL.Query()
	sel, _ := labels.Parse(q.Get("selector")) // visible answers a bad one
	flusher, ok := w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, "this connection cannot stream")
		return
	}
	projects := append(q["projects"], q["project"]...)
	wanted := func(e appEvent) bool {
		name := e.App.Metadata.Name
		_, en := s.live.snapshot()
		return (q.Get("name") == "" || q.Get("name") == name) &&
			(len(projects) == 0 || slices.Contains(projects, e.proj)) &&
			(q.Get("appNamespace") == "" || q.Get("appNamespace") == s.shown(e.App).Metadata.Namespace) &&
			sel.Matches(labels.Set(e.App.Metadata.Labels)) &&
			en.Allowed(c.who, rbac.Request{Resource: "applications", Action: "get", Object: object(e.proj, name)})
	}
	ch, stop := s.subscribe()
	defer stop()
	apps, status, err := s.visible(r.Context(), c, q)
	if err != nil {
		fail(w, status, "%v", err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(typ string, v *contract.View) bool {
		b, _ := json.Marshal(map[string]any{"result": appEvent{Type: typ, App: v}})
		_, err := fmt.Fprintf(w, "data: %s\n\n", b)
		flusher.Flush()
		return err == nil
	}
	for _, v := range apps {
		if !send("ADDED", v) {
			return
		}
	}
	flusher.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case e := <-ch:
			if wanted(e) && !send(e.Type, s.shown(e.App)) {
				return
			}
		}
	}
}
