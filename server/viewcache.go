package main

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

const (
	// viewMaxAge is how long a cached view stands for its app at most.
	viewMaxAge = 2 * time.Minute
	// viewKeep is how long a view is kept at all: the last view of an app
	// whose workflow does not answer in time is what a list shows of it.
	viewKeep = time.Hour
	// listWait bounds how long a list waits for the queries it needs. A
	// workflow answers a query only when its worker gets to it, late when
	// the worker is busy (a fleet syncing a push): such an app is listed
	// as it was last seen, or as its search attributes say, while its
	// query runs on (hubQueryTimeout at most) and its answer is kept for
	// the next look. The stream brings the app's view once it answered.
	listWait = time.Second
	// forgetHold is how long the cache remembers that the server changed
	// an app: longer than any query asked before the change can run
	// (hubQueryTimeout), so that its late answer is not taken for the
	// app as it is now.
	forgetHold = 2 * hubQueryTimeout
)

// viewCache keeps each app's view as the server last queried it, with the
// search attributes the app had then, so that a list of a thousand apps
// queries only those whose attributes moved, not every workflow.
//
// A view stands for its app (get) only while the app's attributes are
// what they were when it was queried, no operation of the app runs, the
// server made no change to it since (forget), and it is younger than
// viewMaxAge: what moves no attribute (a second sync of the same revision
// that ends as the first) shows within that. Otherwise it is only the
// app's last view (last), kept for viewKeep.
//
// A query asked before the server changed the app (a delete, a sync)
// may answer after it: its view is the app's last, never one that
// stands for it, and a query asked after the change does not share its
// answer (flightKey). Otherwise a list right after a delete showed the
// deleted app, as its query in flight had seen it.
type viewCache struct {
	mu     sync.Mutex
	m      map[string]cachedView
	swept  time.Time            // when views older than viewKeep were last dropped
	forgot map[string]time.Time // when the server last changed each app, for forgetHold
}

type cachedView struct {
	v       *contract.View
	sum     contract.Summary
	at      time.Time
	changed bool // the server changed the app since
}

// get is the cached view of name when it still stands for the app, whose
// summary is sum.
func (c *viewCache) get(name string, sum contract.Summary) *contract.View {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[name]
	if !ok || e.changed || !summaryEqual(e.sum, sum) || sum.Operation == string(app.OperationRunning) || time.Since(e.at) > viewMaxAge {
		return nil
	}
	return e.v
}

// last is the last view of name queried, however old; nil if none.
func (c *viewCache) last(name string) *contract.View {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[name].v
}

// put keeps v, the view of name that a query asked at asked answered,
// when the app's summary was sum.
func (c *viewCache) put(name string, sum contract.Summary, v *contract.View, asked time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedView{}
	}
	now := time.Now()
	f, ok := c.forgot[name]
	c.m[name] = cachedView{v: v, sum: sum, at: now, changed: ok && !asked.After(f)}
	if now.Sub(c.swept) > viewMaxAge { // deleted apps' views go too
		c.swept = now
		for k, e := range c.m {
			if now.Sub(e.at) > viewKeep {
				delete(c.m, k)
			}
		}
	}
}

// forget says the server changed name: its view no longer stands for it.
func (c *viewCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[name]
	if !ok {
		// No view yet: nothing is remembered, since any caller may name
		// any app. (A first query in flight may then stand for the app
		// until its attributes move or its view ages.)
		return
	}
	e.changed = true
	c.m[name] = e
	now := time.Now()
	if c.forgot == nil {
		c.forgot = map[string]time.Time{}
	}
	for n, at := range c.forgot { // each app for forgetHold
		if now.Sub(at) > forgetHold {
			delete(c.forgot, n)
		}
	}
	c.forgot[name] = now
}

// flightKey is the key of name's query in the server's flight: a query
// asked after the server changed the app shares no answer with one asked
// before.
func (c *viewCache) flightKey(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.forgot[name]; ok {
		return name + "@" + strconv.FormatInt(f.UnixNano(), 10)
	}
	return name
}

// views answers the views of names, whose summaries are sums: from the
// cache where it may, the others queried (queryAll) and kept.
// What did not answer within listWait is its last view, or the view its
// summary gives; an app gone meanwhile is nil.
func (s *server) views(ctx context.Context, names []string, sums map[string]contract.Summary) []*contract.View {
	out := make([]*contract.View, len(names))
	var ask []string
	at := map[string]int{}
	for i, name := range names {
		if out[i] = s.cache.get(name, sums[name]); out[i] == nil {
			ask = append(ask, name)
			at[name] = i
		}
	}
	if len(ask) == 0 {
		return out
	}
	answers := make(chan queried, len(ask)) // the queries never block on it
	go s.queryAll(ask, sums, answers)
	wait := time.NewTimer(listWait)
	defer wait.Stop()
	pending, gone := map[string]bool{}, map[string]bool{}
	for _, name := range ask {
		pending[name] = true
	}
	for len(pending) > 0 {
		select {
		case a := <-answers:
			delete(pending, a.name)
			out[at[a.name]], gone[a.name] = a.v, a.gone
		case <-wait.C:
			clear(pending)
		case <-ctx.Done():
			clear(pending)
		}
	}
	for _, name := range ask {
		if i := at[name]; out[i] == nil && !gone[name] {
			if out[i] = s.cache.last(name); out[i] == nil {
				out[i] = summaryView(name, sums[name])
			}
		}
	}
	return out
}

// queried is one answer of queryAll: v nil when the query failed, or
// when the app is gone (deleted meanwhile).
type queried struct {
	name string
	v    *contract.View
	gone bool
}

// listQueries bounds the queries of every list together: they outlive
// the requests that asked (queryAll), so requests cannot pile them up.
var listQueries = make(chan struct{}, hubQueries)

// queryAll queries names, at most hubQueries of all lists at once, each
// within hubQueryTimeout, keeps each view in the cache and sends it to
// answers (which holds them all). It outlives the request that asked: a
// late view serves the next look.
func (s *server) queryAll(names []string, sums map[string]contract.Summary, answers chan<- queried) {
	for _, name := range names {
		listQueries <- struct{}{}
		go func() {
			defer func() { <-listQueries }()
			ctx, cancel := context.WithTimeout(context.Background(), hubQueryTimeout)
			defer cancel()
			asked := time.Now()
			v, err := s.query(ctx, name)
			gone := ferryclient.IsAppNotFound(err)
			switch {
			case v != nil:
				s.cache.put(name, sums[name], v, asked)
			case err != nil && !gone && !errors.Is(err, context.Canceled):
				s.log.Warn("query an app for the list", "app", name, "error", err)
			}
			answers <- queried{name: name, v: v, gone: gone}
		}()
	}
}

// query is the view of one app: concurrent asks of the same app (the
// hub's, lists') share one workflow query, unless the server changed the
// app between them.
func (s *server) query(ctx context.Context, name string) (*contract.View, error) {
	v, err, _ := s.flight.Do(s.cache.flightKey(name), func() (any, error) {
		return s.queryApp(ctx, name)
	})
	view, _ := v.(*contract.View)
	return view, err
}

// summaryView is an app as its search attributes describe it: what a
// list shows of an app never queried whose workflow has not answered yet.
func summaryView(name string, sum contract.Summary) *contract.View {
	v := &contract.View{}
	v.Metadata.Name = name
	v.Spec.Project = sum.Project
	v.Spec.Source.RepoURL = sum.RepoURL
	v.Status.Sync = app.SyncStatus{Status: app.SyncStatusCode(sum.Sync), Revision: sum.Revision}
	v.Status.Health = app.HealthStatus{Status: app.HealthStatusCode(sum.Health)}
	if len(sum.Regions) > 0 {
		v.Status.Regions = map[string]app.RegionSummary{}
		for _, r := range sum.Regions {
			v.Status.Regions[r] = app.RegionSummary{}
		}
	}
	return v
}
