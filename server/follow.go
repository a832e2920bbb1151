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
)

// follow keeps the view cache and the open streams up to date until ctx
// ends. Its first round queries every app (the cache is warm before a
// stream needs it); each next one lists the apps' search attributes and
// queries the apps whose attributes moved, those whose operation runs (a
// sync's progress moves no attribute) and a few of the oldest views. A
// view is sent to the streams only when it differs from the last sent.
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
	if !f.warm { // the first round: every app, nothing to send
		names := make([]string, 0, len(now))
		for name := range now {
			names = append(names, name)
		}
		s.views(ctx, names, now)
		f.seen, f.warm = now, true
		return
	}
	followed := 0
	var ask []string
	for name, sum := range now {
		old, ok := f.seen[name]
		if ok && summaryEqual(old, sum) {
			if sum.Operation != string(app.OperationRunning) || followed == maxFollowed {
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
	for i, v := range s.queryAll(ctx, ask) {
		if v == nil { // asked again next round, as a change not yet sent
			if old, ok := f.seen[ask[i]]; ok {
				next[ask[i]] = old
			} else {
				delete(next, ask[i])
			}
			continue
		}
		name := ask[i]
		s.cache.put(name, now[name], v)
		b, _ := json.Marshal(v)
		_, known := f.seen[name]
		if d := sha256.Sum256(b); d != f.sent[name] || !known || !summaryEqual(f.seen[name], now[name]) {
			f.sent[name] = d
			typ := "MODIFIED"
			if !known {
				typ = "ADDED"
			}
			s.watchers.send(appEvent{Type: typ, App: v, proj: v.ProjectOf()})
		}
	}
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

func summaryEqual(a, b contract.Summary) bool {
	return a.Sync == b.Sync && a.Health == b.Health && a.Revision == b.Revision && a.Operation == b.Operation &&
		a.Project == b.Project && slices.Equal(a.Regions, b.Regions)
}
