package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/internal/render"
)

// A sandbox of the pool serves more than one render when they render the
// same checkout: the same directory, that is one commit of one repository
// (gitsource gives each commit's tree a directory of its own). A fleet
// whose apps share a repository renders each commit once per app, and each
// render would otherwise pay a sandbox's start (under gVisor a few tenths
// of a second of CPU: half the CPU of 1,000 apps' onboarding) and the
// checkout's listing and archive. What such a sandbox holds, the checkout
// and the sources and options of the apps that render that commit, is what
// the commit's author controls already. Plugins, which run the commit's
// own programs, and sources with remote bases keep a sandbox per render.
// A shared sandbox serves one render at a time and at most Renderer.Reuse
// renders; it goes after reuseIdle without a render, once its renders used
// a quarter of its CPU time, after a render that failed, or when another
// sandbox needs its place (at most twice Renderer.Pool wait, the one that
// waited longest goes). A checkout's renders run in at most perCheckout
// sandboxes at once; one beyond waits for one of them.

// reuseIdle is how long a shared sandbox waits for its checkout's next
// render (Renderer.reuseIdle, when a test sets it). What a waiting
// sandbox holds is memory (its place is bounded, above), not CPU. At 3 s,
// with no bound on a checkout's sandboxes at once and the newest sandbox
// the one to go when too many waited, a 5,000-app onboarding on two cores
// rendered 2.1 times per sandbox started, and the sandboxes took 392 ms of
// CPU per app, a third of the machine; with these, 9.8 times and 84 ms
// (bench/README.md, "A ninth run").
const reuseIdle = 15 * time.Second

// idleFor is how long r's shared sandboxes wait for a next render.
func (r *Renderer) idleFor() time.Duration {
	if r.reuseIdle > 0 {
		return r.reuseIdle
	}
	return reuseIdle
}

// shared is a sandbox that rendered from its checkout and waits for the
// next render of it.
type shared struct {
	*slot
	key     string        // the checkout on the host
	root    string        // the checkout in the sandbox
	renders int           // served so far
	busy    time.Duration // the renders' time so far
	gen     int           // counts its waits, under sharing.mu
	since   time.Time     // when it began to wait, under sharing.mu
}

// sharing holds the shared sandboxes that wait, by checkout, and counts
// the renders of each checkout under way in shared sandboxes.
type sharing struct {
	mu        sync.Mutex
	idle      map[string][]*shared
	count     int
	closed    bool
	rendering map[string]int
	// left is closed, and replaced, when a render leaves its checkout.
	left chan struct{}
}

// perCheckout is how many renders of one checkout run at once in shared
// sandboxes (Renderer.checkoutRenders, when a test sets it): one per core.
// More would render it no sooner, and each sandbox beyond costs a start
// (under gVisor a few tenths of a second of CPU, several renders' worth)
// and then waits for renders its siblings serve.
func (r *Renderer) perCheckout() int {
	if r.checkoutRenders > 0 {
		return r.checkoutRenders
	}
	return runtime.GOMAXPROCS(0)
}

// enterCheckout waits until fewer than perCheckout renders of the
// checkout at key run, then counts this one; leave uncounts it, once its
// sandbox waits again or is gone.
func (r *Renderer) enterCheckout(ctx context.Context, key string) (leave func(), err error) {
	r.shares.mu.Lock()
	for r.shares.rendering[key] >= r.perCheckout() {
		if r.shares.left == nil {
			r.shares.left = make(chan struct{})
		}
		left := r.shares.left
		r.shares.mu.Unlock()
		select {
		case <-left:
		case <-ctx.Done():
			return nil, fmt.Errorf("sandbox: wait for a sandbox of the checkout: %w", ctx.Err())
		}
		r.shares.mu.Lock()
	}
	if r.shares.rendering == nil {
		r.shares.rendering = map[string]int{}
	}
	r.shares.rendering[key]++
	r.shares.mu.Unlock()
	return func() {
		r.shares.mu.Lock()
		defer r.shares.mu.Unlock()
		if r.shares.rendering[key]--; r.shares.rendering[key] <= 0 {
			delete(r.shares.rendering, key)
		}
		if r.shares.left != nil {
			close(r.shares.left)
			r.shares.left = nil
		}
	}, nil
}

// reusable tells whether a render of src from the checkout at key may
// share a sandbox: r keeps a pool, shares (Reuse above 1), and the render
// runs no plugin and mounts nothing of its own.
func (r *Renderer) reusable(key string, in request, mounts []Mount) bool {
	if r.Reuse <= 1 || len(mounts) > 0 || r.warmPool() == nil {
		return false
	}
	if len(r.settings().Plugins) == 0 {
		return true
	}
	typ, err := r.SourceType(key, in.Source)
	return err == nil && typ != render.SourceTypePlugin
}

// takeShared gives a sandbox that rendered the checkout at key before
// and waits, or nil.
func (r *Renderer) takeShared(key string) *shared {
	r.shares.mu.Lock()
	defer r.shares.mu.Unlock()
	for list := r.shares.idle[key]; len(list) > 0; list = r.shares.idle[key] {
		s := list[len(list)-1]
		r.dropShared(s)
		if s.Alive() {
			return s
		}
		r.counts.end(EndFailed)
		r.discard(s.slot)
	}
	return nil
}

// dropShared takes s out of the waiting ones; r.shares.mu is held.
func (r *Renderer) dropShared(s *shared) bool {
	list := r.shares.idle[s.key]
	for i, w := range list {
		if w == s {
			list = append(list[:i], list[i+1:]...)
			if len(list) == 0 {
				delete(r.shares.idle, s.key)
			} else {
				r.shares.idle[s.key] = list
			}
			r.shares.count--
			return true
		}
	}
	return false
}

// keepShared has s wait for its checkout's next render when ok (the
// render it served succeeded) and s may serve more, else destroys it.
func (r *Renderer) keepShared(s *shared, ok bool) {
	s.renders++
	end := ""
	switch {
	case !ok || !s.Alive():
		end = EndFailed
	case s.renders >= r.Reuse:
		end = EndRenders
	case 4*s.busy >= r.limits().CPUTime:
		end = EndBusy
	}
	r.shares.mu.Lock()
	if end == "" && r.shares.closed {
		end = EndClosed
	}
	if end != "" {
		r.shares.mu.Unlock()
		r.counts.end(end)
		r.discard(s.slot)
		return
	}
	var evicted *shared
	if r.shares.count >= 2*max(r.Pool, 1) {
		evicted = r.longestWaiting()
		r.dropShared(evicted)
	}
	if r.shares.idle == nil {
		r.shares.idle = map[string][]*shared{}
	}
	r.shares.idle[s.key] = append(r.shares.idle[s.key], s)
	r.shares.count++
	s.gen++
	s.since = time.Now()
	gen := s.gen
	r.shares.mu.Unlock()
	if evicted != nil {
		r.counts.end(EndFull)
		r.discard(evicted.slot)
	}
	time.AfterFunc(r.idleFor(), func() {
		r.shares.mu.Lock()
		expired := s.gen == gen && r.dropShared(s)
		r.shares.mu.Unlock()
		if expired {
			r.counts.end(EndIdle)
			r.discard(s.slot)
		}
	})
}

// longestWaiting is the shared sandbox that has waited longest; r.shares.mu
// is held, and at least one waits.
func (r *Renderer) longestWaiting() *shared {
	var oldest *shared
	for _, list := range r.shares.idle {
		for _, w := range list {
			if oldest == nil || w.since.Before(oldest.since) {
				oldest = w
			}
		}
	}
	return oldest
}

// closeShared destroys the sandboxes that wait; later ones are destroyed
// after their render.
func (r *Renderer) closeShared() {
	r.shares.mu.Lock()
	r.shares.closed = true
	var all []*shared
	for _, list := range r.shares.idle {
		all = append(all, list...)
	}
	r.shares.idle, r.shares.count = nil, 0
	r.shares.mu.Unlock()
	for _, s := range all {
		r.counts.end(EndClosed)
		r.discard(s.slot)
	}
}

// askShared renders req in s, from the checkout s holds.
func (r *Renderer) askShared(ctx context.Context, s *shared, req request) (*Result, error) {
	req.Root, req.Again, req.Archive = s.root, true, false
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode the request: %w", err)
	}
	start := time.Now()
	defer func() { s.busy += time.Since(start) }()
	return s.Ask(ctx, bytes.NewReader(append(body, '\n')))
}
