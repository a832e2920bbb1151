package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// pooled is what a pool keeps: a started sandbox.
type pooled interface {
	Alive() bool
	Ready() <-chan struct{}
	Destroy()
}

// pool keeps size sandboxes started ahead of their runs, so that a run
// does not wait for a sandbox's start. Each sandbox serves one run and is
// destroyed (never reused); the end of its run wakes the refill, which starts
// sandboxes one at a time in the background and adds each once it is
// ready (its renderer warm and waiting). A run that finds none ready
// waits for the one the refill is starting, if any, which is ready sooner
// than one it would start itself; else it starts its own.
type pool[T pooled] struct {
	size  int
	start func() (T, error)
	ready chan T
	wake  chan struct{}
	stop  chan struct{}

	mu     sync.Mutex
	closed bool
	// booting is closed when the sandbox the refill is starting is in
	// ready, or failed; nil while the refill starts none.
	booting chan struct{}
	wg      sync.WaitGroup // the refill and the destroys under way

	warm, cold, started atomic.Int64
	// lent is how many sandboxes of the pool serve a run: the refill
	// replaces them once the run ends (release).
	lent atomic.Int64
}

// refillBackoff is the longest wait between failed starts of the refill.
const refillBackoff = time.Minute

func newPool[T pooled](size int, start func() (T, error)) *pool[T] {
	p := &pool[T]{size: size, start: start, ready: make(chan T, size), wake: make(chan struct{}, 1), stop: make(chan struct{})}
	p.wg.Add(1)
	go p.refill()
	return p
}

func (p *pool[T]) refill() {
	defer p.wg.Done()
	backoff := time.Second
	for {
		for len(p.ready)+int(p.lent.Load()) < p.size {
			select {
			case <-p.stop:
				return
			default:
			}
			_, err := p.boot()
			if err != nil {
				// The run that finds the pool empty starts its own and
				// reports the error.
				select {
				case <-p.stop:
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, refillBackoff)
				continue
			}
			backoff = time.Second
		}
		select {
		case <-p.stop:
			return
		case <-p.wake:
		}
	}
}

// boot starts a sandbox for the pool and waits until it is ready; the
// gets that find the pool empty meanwhile wait for it (booting).
func (p *pool[T]) boot() (s T, err error) {
	booting := make(chan struct{})
	p.mu.Lock()
	p.booting = booting
	p.mu.Unlock()
	defer func() {
		if err == nil {
			// Only refill adds, so there is room.
			p.ready <- s
		}
		p.mu.Lock()
		p.booting = nil
		p.mu.Unlock()
		close(booting)
	}()
	if s, err = p.start(); err != nil {
		return s, err
	}
	select {
	case <-s.Ready():
	case <-p.stop:
	}
	if !s.Alive() || p.stopped() {
		s.Destroy()
		return s, errors.New("the sandbox ended before it was ready")
	}
	p.started.Add(1)
	return s, nil
}

func (p *pool[T]) stopped() bool {
	select {
	case <-p.stop:
		return true
	default:
		return false
	}
}

// get takes a ready sandbox, or the one the refill is starting once it is
// ready, or else one started now (which the caller waits for, ready or
// not, in Finish). warm tells a sandbox of the pool.
func (p *pool[T]) get(ctx context.Context) (s T, warm bool, err error) {
	for waited := false; ; {
		// Read before the pool: a sandbox the refill started is in ready
		// before booting is nil.
		p.mu.Lock()
		booting := p.booting
		p.mu.Unlock()
		// Counted before it is taken, so that the refill never sees the
		// pool short of one that is only changing hands.
		p.lent.Add(1)
		select {
		case s = <-p.ready:
			if !s.Alive() {
				// It died while it waited: never hand out a sandbox in an
				// unknown state.
				p.lent.Add(-1)
				p.discard(s)
				p.signal()
				continue
			}
			p.warm.Add(1)
			return s, true, nil
		default:
			p.lent.Add(-1)
			p.signal()
		}
		if booting != nil && !waited {
			// Once: another get may take it, and the next start would be
			// no sooner than one of the caller's own.
			waited = true
			select {
			case <-booting:
			case <-ctx.Done():
				var none T
				return none, false, fmt.Errorf("sandbox: %w", ctx.Err())
			}
			continue
		}
		p.cold.Add(1)
		s, err = p.start()
		return s, false, err
	}
}

func (p *pool[T]) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// release ends the run of a sandbox get gave: it is destroyed (discard)
// and, when it was the pool's (warm), the refill replaces it: after the
// run, so that a sandbox's start does not take the cores from the run
// that emptied its place.
func (p *pool[T]) release(s T, warm bool) {
	if warm {
		p.lent.Add(-1)
	}
	p.discard(s)
	p.signal()
}

// detach ends the pool's part in a sandbox get gave, which its caller
// keeps: when it was the pool's (warm), the refill replaces it.
func (p *pool[T]) detach(warm bool) {
	if warm {
		p.lent.Add(-1)
	}
	p.signal()
}

// discard destroys a sandbox in the background; close waits for it.
func (p *pool[T]) discard(s T) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		s.Destroy()
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		s.Destroy()
	}()
}

// close stops the refill and destroys every sandbox of the pool; later
// gets start sandboxes of their own.
func (p *pool[T]) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	close(p.stop)
	p.wg.Wait()
	for {
		select {
		case s := <-p.ready:
			s.Destroy()
		default:
			return
		}
	}
}

// idle is how many sandboxes wait in the pool.
func (p *pool[T]) idle() int { return len(p.ready) }
