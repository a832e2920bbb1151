package sandbox

import (
	"sync"
	"sync/atomic"
	"time"
)

// pooled is what a pool keeps: a started sandbox.
type pooled interface {
	Alive() bool
	Destroy()
}

// pool keeps size sandboxes started ahead of their runs, so that a run
// does not wait for a sandbox's start. Each sandbox serves one run and is
// destroyed (never reused); taking one wakes the refill, which starts
// sandboxes one at a time in the background. A run that finds none ready
// starts its own.
type pool[T pooled] struct {
	size  int
	start func() (T, error)
	ready chan T
	wake  chan struct{}
	stop  chan struct{}

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup // the refill and the destroys under way

	warm, cold, started atomic.Int64
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
		for len(p.ready) < p.size {
			select {
			case <-p.stop:
				return
			default:
			}
			s, err := p.start()
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
			p.started.Add(1)
			// Only refill adds, so there is room.
			p.ready <- s
		}
		select {
		case <-p.stop:
			return
		case <-p.wake:
		}
	}
}

// get takes a started sandbox: a ready one, or else one started now. warm
// tells which.
func (p *pool[T]) get() (s T, warm bool, err error) {
	defer p.signal()
	for {
		select {
		case s = <-p.ready:
			if !s.Alive() {
				// It died while it waited: never hand out a sandbox in an
				// unknown state.
				p.discard(s)
				continue
			}
			p.warm.Add(1)
			return s, true, nil
		default:
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

// discard destroys a used sandbox in the background; close waits for it.
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
