package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/rbac"
)

// streamEvery is how often the apps' search attributes are read for
// changes while someone watches.
const streamEvery = 2 * time.Second

// appEvent is one change of an app, as Argo CD's watch event.
type appEvent struct {
	Type string         `json:"type"` // ADDED, MODIFIED or DELETED
	App  *contract.View `json:"application"`
	proj string
}

// watchers is the one poller of the apps' changes that every stream
// shares: it runs while someone watches, lists the apps' search
// attributes every streamEvery, and queries and sends the apps whose
// attributes changed.
type watchers struct {
	mu     sync.Mutex
	subs   map[chan appEvent]bool
	cancel context.CancelFunc
}

// subscribe adds a watcher and starts the poller for the first one.
func (s *server) subscribe() (chan appEvent, func()) {
	w := &s.watchers
	ch := make(chan appEvent, 256)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs == nil {
		w.subs = map[chan appEvent]bool{}
	}
	w.subs[ch] = true
	if len(w.subs) == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel = cancel
		go s.pollChanges(ctx)
	}
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs, ch)
		if len(w.subs) == 0 {
			w.cancel()
		}
	}
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

// pollChanges sends the apps' changes until ctx ends.
func (s *server) pollChanges(ctx context.Context) {
	seen := map[string]contract.Summary{}
	t := time.NewTicker(streamEvery)
	defer t.Stop()
	for first := true; ; first = false {
		// The first round learns the apps; each stream sent them itself.
		now := map[string]contract.Summary{}
		err := ferryclient.ListApps(ctx, s.temporal, func(name string, sum contract.Summary) { now[name] = sum })
		if err == nil {
			for name, sum := range now {
				old, ok := seen[name]
				if first || ok && summaryEqual(old, sum) {
					continue
				}
				if v, err := ferryclient.Query(ctx, s.temporal, name); err == nil {
					typ := "MODIFIED"
					if !ok {
						typ = "ADDED"
					}
					s.watchers.send(appEvent{Type: typ, App: v, proj: v.ProjectOf()})
				}
			}
			for name, sum := range seen {
				if _, ok := now[name]; !ok {
					v := &contract.View{}
					v.Metadata.Name, v.Spec.Project = name, sum.Project
					s.watchers.send(appEvent{Type: "DELETED", App: v, proj: sum.Project})
				}
			}
			seen = now
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func summaryEqual(a, b contract.Summary) bool {
	return a.Sync == b.Sync && a.Health == b.Health && a.Revision == b.Revision && a.Operation == b.Operation &&
		a.Project == b.Project && slices.Equal(a.Regions, b.Regions)
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
