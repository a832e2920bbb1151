package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

const (
	// hubEvery is how often the hub lists the apps' search attributes
	// while a stream is open, so that a change reaches an open page within
	// a second of the workflow's update.
	hubEvery = 500 * time.Millisecond
	// followFor is how long after the server changed an app (a sync, a
	// refresh) the hub queries it every round: a sync of a synced app may
	// move no search attribute, and still its operation changes.
	followFor = 30 * time.Second
	// maxFollowed bounds the apps one round queries although their
	// attributes did not move (operation running, followed, or a view
	// older than viewMaxAge); the others wait for a later round.
	maxFollowed = 32
	// maxFollowedNames bounds the names followed at once: a request
	// naming an app that does not exist still adds one for followFor.
	maxFollowedNames = 1024
	// hubQueries is how many queries run at once; hubQueryTimeout bounds
	// one. A round does not wait for its queries (but the first): each
	// view counts when it comes, so an app that does not answer delays
	// no other. It is asked again when its attributes move, or after
	// failedBackoff.
	hubQueries      = 16
	hubQueryTimeout = 10 * time.Second
	failedBackoff   = 5 * time.Second
)

// hub is the one reader of the apps' changes that every open stream
// shares. While someone watches, it lists the apps' search attributes
// every hubEvery and queries the apps whose attributes moved, those whose
// operation runs, those the server just changed and the oldest views; it
// keeps each app's latest view with a sequence number that grows with
// every change. A stream sends an app again when its number passed the
// one the stream sent last: a stream never misses the latest state, and
// a burst of changes costs it one event per app.
type hub struct {
	log   *slog.Logger
	list  func(ctx context.Context, fn func(name string, sum contract.Summary)) error
	query func(ctx context.Context, name string) (*contract.View, error)
	cache *viewCache // the first round takes its current views; every view queried is kept there
	now   func() time.Time

	mu       sync.Mutex
	subs     map[chan struct{}]bool
	cancel   context.CancelFunc
	run      int           // counts the hub's runs: a late answer of an old one is dropped
	ready    chan struct{} // closed when the first round of this run ended
	err      error         // the last round's listing error
	listed   map[string]contract.Summary
	apps     map[string]*hubApp
	seq      uint64
	asking   map[string]bool
	followed map[string]time.Time // until when
	failed   map[string]failure
}

// hubApp is an app as the hub last saw it.
type hubApp struct {
	name   string
	sum    contract.Summary
	view   *contract.View
	seq    uint64
	digest [32]byte
	at     time.Time // when view was queried
}

type failure struct {
	sum contract.Summary
	at  time.Time
}

// subscribe adds a watcher, woken when an app changed, and starts the
// hub for the first one.
func (h *hub) subscribe() (wake chan struct{}, stop func()) {
	wake = make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[chan struct{}]bool{}
	}
	h.subs[wake] = true
	if len(h.subs) == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		h.cancel = cancel
		go h.loop(ctx, h.reset(), h.ready)
	}
	return wake, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, wake)
		if len(h.subs) == 0 {
			h.cancel()
		}
	}
}

// reset starts a run with nothing known; h.mu is held.
func (h *hub) reset() (run int) {
	h.run++
	h.ready, h.err = make(chan struct{}), nil
	h.listed, h.apps, h.asking, h.failed = nil, map[string]*hubApp{}, map[string]bool{}, map[string]failure{}
	return h.run
}

// follow makes the hub query name every round for a while: the server
// just changed it.
func (h *hub) follow(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 { // nobody watches: nothing to follow
		return
	}
	if h.followed == nil {
		h.followed = map[string]time.Time{}
	}
	now := h.now()
	if len(h.followed) >= maxFollowedNames { // any caller may name any app: bounded
		for n, until := range h.followed {
			if now.After(until) {
				delete(h.followed, n)
			}
		}
		if len(h.followed) >= maxFollowedNames {
			return
		}
	}
	h.followed[name] = now.Add(followFor)
}

func (h *hub) loop(ctx context.Context, run int, ready chan struct{}) {
	sem := make(chan struct{}, hubQueries)
	_, err := h.round(ctx, run, sem, true)
	h.mu.Lock()
	if run == h.run {
		h.err = err
	}
	h.mu.Unlock()
	close(ready)
	t := time.NewTicker(hubEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		_, err := h.round(ctx, run, sem, false)
		if err != nil && ctx.Err() == nil {
			h.log.Warn("the stream's round of the apps", "error", err)
		}
		h.mu.Lock()
		if run == h.run { // not a run stopped meanwhile
			h.err = err
		}
		h.mu.Unlock()
	}
}

// wait blocks until the hub's first round ended: the last round's error,
// if its listing failed.
func (h *hub) wait(ctx context.Context) error {
	h.mu.Lock()
	ready := h.ready
	h.mu.Unlock()
	select {
	case <-ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// round lists the apps, drops those gone and asks those it should (toAsk),
// at most len(sem) at once; its answers count as they come (answered
// waits for them). The first round waits for its answers, listWait at
// most (a stream's first events; the others follow as they come), and
// takes the cached views that are current (a list just made them).
func (h *hub) round(ctx context.Context, run int, sem chan struct{}, first bool) (answered *sync.WaitGroup, err error) {
	now := map[string]contract.Summary{}
	if err := h.list(ctx, func(name string, sum contract.Summary) { now[name] = sum }); err != nil {
		return nil, err
	}
	h.mu.Lock()
	if run != h.run { // stopped meanwhile: the state is the next run's
		h.mu.Unlock()
		return &sync.WaitGroup{}, ctx.Err()
	}
	h.listed = now
	gone := false
	for name := range h.apps {
		if _, ok := now[name]; !ok {
			delete(h.apps, name)
			gone = true
		}
	}
	if gone {
		h.wakeAll()
	}
	ask := h.toAsk(now)
	h.mu.Unlock()

	wg := &sync.WaitGroup{}
	for _, name := range ask {
		sum := now[name]
		if first {
			if v := h.cache.get(name, sum); v != nil {
				h.answer(run, name, sum, v, false)
				continue
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				h.answer(run, name, sum, nil, false)
				return
			}
			defer func() { <-sem }()
			qctx, cancel := context.WithTimeout(ctx, hubQueryTimeout)
			defer cancel()
			asked := time.Now()
			v, err := h.query(qctx, name)
			failed := err != nil && ctx.Err() == nil && !ferryclient.IsAppNotFound(err)
			if failed {
				h.log.Warn("query an app for the stream", "app", name, "error", err)
			}
			if v != nil {
				h.cache.put(name, sum, v, asked)
			}
			h.answer(run, name, sum, v, failed)
		}()
	}
	if first {
		waited := make(chan struct{})
		go func() { wg.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(listWait):
		case <-ctx.Done():
		}
	}
	return wg, nil
}

// answer keeps v, name's view when its summary was sum (nil: no answer),
// and wakes the watchers when it changed. An app whose query failed
// (failed: not gone, not stopped) and that the hub has no view of yet is
// shown as the list shows it (its last view, or its search attributes),
// asked again as the oldest view: every app listed has a view once it
// was asked (settled).
func (h *hub) answer(run int, name string, sum contract.Summary, v *contract.View, failed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if run != h.run {
		return
	}
	delete(h.asking, name)
	if v == nil {
		h.failed[name] = failure{sum: sum, at: h.now()}
		if _, listed := h.listed[name]; failed && listed && h.apps[name] == nil {
			if v = h.cache.last(name); v == nil {
				v = summaryView(name, sum)
			}
			h.seq++
			h.apps[name] = &hubApp{name: name, sum: sum, view: v, seq: h.seq}
			h.wakeAll()
		}
		return
	}
	delete(h.failed, name)
	if _, ok := h.listed[name]; !ok { // deleted while asked
		return
	}
	b, _ := json.Marshal(v)
	d := sha256.Sum256(b)
	if e := h.apps[name]; e != nil && e.digest == d {
		e.sum, e.at = sum, h.now()
		return
	}
	h.seq++
	h.apps[name] = &hubApp{name: name, sum: sum, view: v, seq: h.seq, digest: d, at: h.now()}
	h.wakeAll()
}

// wakeAll wakes every watcher; h.mu is held.
func (h *hub) wakeAll() {
	for wake := range h.subs {
		select {
		case wake <- struct{}{}:
		default: // woken already
		}
	}
}

// toAsk is the apps of now a round queries, marked as asked: those new
// or whose attributes moved, then at most maxFollowed of those whose
// operation runs, the server changed, or whose view is old, oldest view
// first. An app asked already is not asked again before it answered; one
// that did not answer is asked again after failedBackoff, or when its
// attributes move. h.mu is held.
func (h *hub) toAsk(now map[string]contract.Summary) []string {
	at := h.now()
	var ask, more []string
	for name, sum := range now {
		if f, ok := h.failed[name]; h.asking[name] || ok && summaryEqual(f.sum, sum) && at.Sub(f.at) < failedBackoff {
			continue
		}
		e := h.apps[name]
		switch {
		case e == nil || !summaryEqual(e.sum, sum):
			ask = append(ask, name)
		case sum.Operation == string(app.OperationRunning), at.Before(h.followed[name]), at.Sub(e.at) > viewMaxAge:
			more = append(more, name)
		}
	}
	slices.SortFunc(more, func(a, b string) int { return h.apps[a].at.Compare(h.apps[b].at) })
	ask = append(ask, more[:min(len(more), maxFollowed)]...)
	for name, until := range h.followed {
		if at.After(until) {
			delete(h.followed, name)
		}
	}
	for _, name := range ask {
		h.asking[name] = true
	}
	return ask
}

// settled: every app the last round listed has a view, queried or
// stood in for (answer); a stream's first apps are then all there are.
func (h *hub) settled() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name := range h.listed {
		if h.apps[name] == nil {
			return false
		}
	}
	return true
}

// since is the apps whose views changed after the numbers in sent (an
// app sent last with that number), and those sent that are gone.
func (h *hub) since(sent map[string]uint64) (changed []*hubApp, gone []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.apps {
		if e.seq > sent[e.name] {
			changed = append(changed, e)
		}
	}
	for name := range sent {
		if _, ok := h.apps[name]; !ok {
			gone = append(gone, name)
		}
	}
	slices.SortFunc(changed, func(a, b *hubApp) int { return cmp.Compare(a.seq, b.seq) })
	slices.Sort(gone)
	return changed, gone
}

func summaryEqual(a, b contract.Summary) bool {
	return a.Sync == b.Sync && a.Health == b.Health && a.Revision == b.Revision && a.Operation == b.Operation &&
		a.Project == b.Project && slices.Equal(a.Regions, b.Regions) && a.Namespace == b.Namespace
}
