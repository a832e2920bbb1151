package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

const (
	// streamEvery is how often the apps' search attributes are read while
	// a stream is open: one listing of every app, so that a change reaches
	// an open page within a second of the workflow's update.
	streamEvery = 500 * time.Millisecond
	// idleEvery is how often they are read while no stream is open, to
	// keep the view cache fresh.
	idleEvery = 5 * time.Second
	// maxFollowed bounds the apps whose operation runs that one round
	// queries (their progress moves no search attribute); maxAged the
	// views older than viewMaxAge that one round queries again.
	maxFollowed = 20
	maxAged     = 20
	viewMaxAge  = 2 * time.Minute
	// followQueryTimeout bounds one query of the poller: an app whose
	// workflow does not answer (its worker busy, or gone) delays a round
	// this long at most, and is asked again only when its attributes move
	// or after viewMaxAge.
	followQueryTimeout = 3 * time.Second
	// followBackoff: a running app whose query failed is not followed
	// again for this long (a change of its attributes is still asked).
	followBackoff = 30 * time.Second
)

// follow keeps the view cache and the open streams up to date until ctx
// ends. Its first round queries every app (warmUp: the cache is warm
// before a stream needs it); each next one lists the apps' search attributes and
// queries the apps whose attributes moved, those whose operation runs (a
// sync's progress moves no attribute) and a few of the oldest views. Each
// view is sent to the streams as it comes, and only when it differs from
// the last sent.
func (s *server) follow(ctx context.Context) {
	f := follower{s: s, seen: map[string]contract.Summary{}, sent: map[string][32]byte{}}
	t := time.NewTicker(streamEvery)
	defer t.Stop()
	var last time.Time
	for {
		if s.watchers.watched() || time.Since(last) >= idleEvery {
			last = time.Now()
			f.round(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

type follower struct {
	s    *server
	warm bool
	seen map[string]contract.Summary
	sent map[string][32]byte // the digest of the view last sent, per app
}

func (f *follower) round(ctx context.Context) {
	s := f.s
	now := map[string]contract.Summary{}
	if err := ferryclient.ListApps(ctx, s.temporal, func(name string, sum contract.Summary) { now[name] = sum }); err != nil {
		return
	}
	s.cache.keep(now)
	if !f.warm {
		f.warmUp(ctx, now)
		return
	}
	followed := 0
	var ask []string
	for name, sum := range now {
		old, ok := f.seen[name]
		if ok && summaryEqual(old, sum) {
			if sum.Operation != string(app.OperationRunning) || followed == maxFollowed || s.cache.failedWithin(name, followBackoff) {
				continue
			}
			followed++
		}
		ask = append(ask, name)
	}
	for _, name := range s.cache.oldest(now, maxAged, viewMaxAge) {
		if !slices.Contains(ask, name) {
			ask = append(ask, name)
		}
	}
	next := now
	s.queryEach(ctx, ask, followQueryTimeout, func(i int, v *contract.View) {
		name := ask[i]
		if v == nil { // asked again next round, as a change not yet sent
			s.cache.failed(name)
			if old, ok := f.seen[name]; ok {
				next[name] = old
			} else {
				delete(next, name)
			}
			return
		}
		s.cache.put(name, now[name], v)
		b, _ := json.Marshal(v)
		old, known := f.seen[name]
		if d := sha256.Sum256(b); d != f.sent[name] || !known || !summaryEqual(old, now[name]) {
			f.sent[name] = d
			typ := "MODIFIED"
			if !known {
				typ = "ADDED"
			}
			s.watchers.send(appEvent{Type: typ, App: v, proj: v.ProjectOf()})
		}
	})
	for name, sum := range f.seen {
		if _, ok := next[name]; !ok {
			v := &contract.View{}
			v.Metadata.Name, v.Spec.Project = name, sum.Project
			s.watchers.send(appEvent{Type: "DELETED", App: v, proj: sum.Project})
			delete(f.sent, name)
		}
	}
	f.seen = next
}

// warmUp is the first round: every app is queried and kept. A stream may
// have opened while it ran, with views older than these (its first events
// came from its own list), so each view is sent too, as MODIFIED: for a
// stream that already shows the app, the latest state.
func (f *follower) warmUp(ctx context.Context, now map[string]contract.Summary) {
	s := f.s
	names := make([]string, 0, len(now))
	for name := range now {
		names = append(names, name)
	}
	s.queryEach(ctx, names, followQueryTimeout, func(i int, v *contract.View) {
		name := names[i]
		if v == nil {
			s.cache.failed(name)
			delete(now, name) // asked as a new app next round
			return
		}
		s.cache.put(name, now[name], v)
		b, _ := json.Marshal(v)
		f.sent[name] = sha256.Sum256(b)
		s.watchers.send(appEvent{Type: "MODIFIED", App: v, proj: v.ProjectOf()})
	})
	f.seen, f.warm = now, true
}

func summaryEqual(a, b contract.Summary) bool {
	return a.Sync == b.Sync && a.Health == b.Health && a.Revision == b.Revision && a.Operation == b.Operation &&
		a.Project == b.Project && slices.Equal(a.Regions, b.Regions)
}
