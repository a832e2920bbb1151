package sandbox

import (
	"context"
	"fmt"
	"os"
	"time"
)

// A pooled render's sandbox is started before its checkout is known, the
// renderer in it waiting on stdin. A checkout small enough is sent after
// the request (archive.go). A larger one is placed in an empty directory
// of the sandbox's own (a slot), which it mounts read-only at linkedDir:
// at the render the checkout is hard-linked into the slot, then the
// request written: the sandbox sees the files (gVisor revalidates its bind mounts, --file-access-mounts'
// default shared; bwrap's bind is the host directory itself). The slot is
// the sandbox's alone and goes with it after the one render.

// slot is a pooled sandbox and its checkout directory.
type slot struct {
	Sandbox
	dir string
}

func (s *slot) Destroy() {
	s.Sandbox.Destroy()
	_ = os.RemoveAll(s.dir)
}

// Warm starts r's pool of Pool sandboxes, when r has one and its Runner
// can start sandboxes ahead (both sandboxed modes can); a render warms it
// too. Close ends it.
func (r *Renderer) Warm() { r.warmPool() }

// warmPool is r's pool, started on first use; nil when r keeps none.
func (r *Renderer) warmPool() *pool[*slot] {
	starter, ok := r.Runner.(Starter)
	if r.Pool <= 0 || !ok || r.Binary == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pool == nil {
		limits := r.limits()
		r.pool = newPool(r.Pool, func() (*slot, error) { return r.startSlot(starter, limits) })
	}
	return r.pool
}

func (r *Renderer) startSlot(starter Starter, limits Limits) (*slot, error) {
	dir, err := os.MkdirTemp(r.PoolDir, "slot-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: a pooled sandbox's checkout directory: %w", err)
	}
	spec := r.spec(dir, limits)
	spec.Args, spec.ReadyLine = append(spec.Args, warmArg, heapArg(limits.Memory)), true
	sb, err := starter.Start(spec)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	r.counts.started.Add(1)
	return &slot{Sandbox: sb, dir: dir}, nil
}

// runPooled renders in a sandbox of p: the request written to the
// renderer that waits in it, with the checkout, or else the checkout
// placed into its slot first. With a key (the checkout on the host), the
// sandbox may go on to serve that checkout's next renders (keepShared)
// rather than be destroyed; root is the checkout in the sandbox.
func (r *Renderer) runPooled(ctx context.Context, p *pool[*slot], in *checkoutInput, root, key string) (*Result, func(ok bool), error) {
	none := func(bool) {}
	if err := ctx.Err(); err != nil {
		return nil, none, fmt.Errorf("sandbox: %w", err)
	}
	s, warm, err := p.get(ctx)
	if err != nil {
		return nil, none, err
	}
	if !in.archive {
		if err := linkTree(in.root, s.dir); err != nil {
			p.release(s, warm)
			return nil, none, fmt.Errorf("sandbox: place the checkout in a pooled sandbox: %w", err)
		}
	}
	if key == "" {
		res, err := s.Finish(ctx, in)
		// Released once the caller is done with the answer: the sandbox's
		// end and the refill's next start take both cores for a while,
		// which the answer's decoding had shared with them (1,000
		// ConfigMaps under gVisor: median 5.5 ms, 2.3-15.5, against
		// 2.9 ms, 1.7-9.1, once after them; 12 renders each).
		return res, func(bool) { p.release(s, warm) }, err
	}
	start := time.Now()
	res, err := s.Ask(ctx, in)
	sh := &shared{slot: s, key: key, root: root, busy: time.Since(start)}
	// The sandbox is the checkout's from now on: the pool refills.
	p.detach(warm)
	return res, func(ok bool) { r.keepShared(sh, ok) }, err
}

// Idle is how many sandboxes of r's pool are ready and waiting.
func (r *Renderer) Idle() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pool == nil {
		return 0
	}
	return r.pool.idle()
}
