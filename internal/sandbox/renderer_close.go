package sandbox

import (
	"context"
	"errors"
	"sync"
)

// A worker closes its Renderer once its Temporal workers have stopped, and
// a render whose activity outlived their stop timeout may still run then.
// Close ends such renders and waits for them, and for every sandbox they
// started: a worker exits with no runsc or bwrap command of its own left,
// since one left would end after it, a zombie for the host's init to reap
// (hack/run.sh's teardown checks that none is left).

// ErrClosed is the error of a render that Close ended or that came after
// it: another worker renders on the activity's retry.
var ErrClosed = errors.New("the worker is stopping: its render sandboxes are closed")

// renders counts the renders under way, which close ends.
type renders struct {
	mu     sync.Mutex
	closed bool
	ctx    context.Context // done once closed; made at the first render
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
}

// begin counts a render from ctx, with a context that close ends; end
// ends the render's count. After close, begin gives ErrClosed.
func (f *renders) begin(ctx context.Context) (_ context.Context, end func(), _ error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, nil, ErrClosed
	}
	if f.ctx == nil {
		f.ctx, f.cancel = context.WithCancelCause(context.Background())
	}
	f.wg.Add(1)
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(f.ctx, func() { cancel(ErrClosed) })
	return ctx, func() {
		stop()
		cancel(nil)
		f.wg.Done()
	}, nil
}

// close ends the renders under way and waits for them.
func (f *renders) close() {
	f.mu.Lock()
	f.closed = true
	if f.cancel != nil {
		f.cancel(ErrClosed)
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// Close ends the renders under way and waits for them, destroys r's
// pooled sandboxes and stops their refill, waits for every sandbox a
// render started to be destroyed, then releases r.State. A render after
// Close fails with ErrClosed.
func (r *Renderer) Close() error {
	r.renders.close()
	r.mu.Lock()
	p := r.pool
	r.mu.Unlock()
	if p != nil {
		p.close()
	}
	r.closeShared()
	r.destroys.Wait()
	if r.State != nil {
		return r.State.Close()
	}
	return nil
}
