package sandbox

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
)

// fakePooled is a sandbox whose readiness the test decides.
type fakePooled struct {
	ready     chan struct{}
	destroyed atomic.Bool
	once      sync.Once
}

func (f *fakePooled) Alive() bool            { return !f.destroyed.Load() }
func (f *fakePooled) Ready() <-chan struct{} { return f.ready }
func (f *fakePooled) Destroy()               { f.destroyed.Store(true); f.setReady() }
func (f *fakePooled) setReady()              { f.once.Do(func() { close(f.ready) }) }
func newFakePool(size int) (*pool[*fakePooled], chan *fakePooled) {
	started := make(chan *fakePooled, 16)
	p := newPool(size, func() (*fakePooled, error) {
		f := &fakePooled{ready: make(chan struct{})}
		started <- f
		return f, nil
	})
	return p, started
}

// TestPoolHandsOutOnlyReadySandboxes: a sandbox the pool started is not
// in the pool until it is ready; a get that finds the pool empty while
// the refill starts one waits for that one, and starts none of its own.
func TestPoolHandsOutOnlyReadySandboxes(t *testing.T) {
	p, started := newFakePool(1)
	defer p.close()
	first := <-started
	if n := p.idle(); n != 0 {
		t.Fatalf("the pool holds %d sandboxes before its first is ready", n)
	}
	type got struct {
		s    *fakePooled
		warm bool
		err  error
	}
	done := make(chan got, 1)
	go func() {
		s, warm, err := p.get(context.Background())
		done <- got{s, warm, err}
	}()
	first.setReady()
	g := <-done
	if g.err != nil || g.s != first || !g.warm {
		t.Fatalf("get gave %p (warm %v, err %v), want the pool's first sandbox %p, warm", g.s, g.warm, g.err, first)
	}
	if c := p.cold.Load(); c != 0 {
		t.Errorf("get started %d sandboxes of its own while the pool's was starting", c)
	}
	select {
	case extra := <-started:
		t.Errorf("a sandbox %p started before the first one's run ended", extra)
	default:
	}
	// The run's end wakes the refill.
	p.release(g.s, g.warm)
	second := <-started
	second.setReady()
	s, warm, err := p.get(context.Background())
	if err != nil || s != second || !warm {
		t.Fatalf("the next get gave %p (warm %v, err %v), want the refilled sandbox %p", s, warm, err, second)
	}
	p.release(s, warm)
}

// TestPoolGetEndsWithItsContext: a get waiting for the pool's starting
// sandbox ends with its caller's context.
func TestPoolGetEndsWithItsContext(t *testing.T) {
	p, started := newFakePool(1)
	defer p.close()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := p.get(ctx); err == nil {
		t.Fatal("get waited past its context's end")
	}
}
