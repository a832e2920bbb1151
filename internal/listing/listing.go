// Package listing shares what a worker lists of a remote source: a Git
// repository's refs (ls-remote), a Helm repository's index.yaml, an OCI
// repository's tags. However many Applications ask about one source, one
// listing serves them: concurrent callers join the call in flight, and a
// listing is reused while it is younger than the caller's maximum age.
//
//	var refs listing.Cache[refList]
//	l, err := refs.Get(ctx, key, listing.Want{MaxAge: interval}, timeout, lsRemote)
package listing

import (
	"context"
	"sync"
	"time"
)

// Want says how fresh a listing a caller takes.
type Want struct {
	// MaxAge is how old a listing may be; <= 0 means never reuse one.
	MaxAge time.Duration
	// Force waits for a listing that starts after the call (a hard
	// refresh, a webhook announcing a push), joining one already started
	// after it rather than making another.
	Force bool
}

// Cache holds the newest listing of each key and the listing in flight.
// The zero Cache is ready; it is safe for concurrent use.
type Cache[T any] struct {
	mu      sync.Mutex
	entries map[string]*entry[T]
}

type entry[T any] struct {
	val      T
	ok       bool
	listedAt time.Time // when the listing that produced val started
	inflight *flight[T]
}

type flight[T any] struct {
	started time.Time
	done    chan struct{}
	val     T
	err     error
}

// Get returns key's listing: the cached one when it is younger than
// want.MaxAge (unless want.Force), else the one in flight, else a new call
// of list. list runs detached from ctx, bounded by timeout, so that a
// caller giving up does not fail the others waiting on it; a failed
// listing is not cached.
func (c *Cache[T]) Get(ctx context.Context, key string, want Want, timeout time.Duration, list func(context.Context) (T, error)) (T, error) {
	now := time.Now()
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*entry[T]{}
	}
	e := c.entries[key]
	if e == nil {
		e = &entry[T]{}
		c.entries[key] = e
	}
	if !want.Force && e.ok && want.MaxAge > 0 && now.Sub(e.listedAt) < want.MaxAge {
		v := e.val
		c.mu.Unlock()
		return v, nil
	}
	f := e.inflight
	// A forced refresh may not join a listing that started before it: that
	// one could miss the change the caller was told about.
	if f == nil || (want.Force && f.started.Before(now)) {
		f = &flight[T]{started: time.Now(), done: make(chan struct{})}
		e.inflight = f
		go c.run(e, f, timeout, list)
	}
	c.mu.Unlock()

	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

func (c *Cache[T]) run(e *entry[T], f *flight[T], timeout time.Duration, list func(context.Context) (T, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	f.val, f.err = list(ctx)

	c.mu.Lock()
	if f.err == nil && (!e.ok || !f.started.Before(e.listedAt)) {
		e.val, e.ok, e.listedAt = f.val, true, f.started
	}
	if e.inflight == f {
		e.inflight = nil
	}
	c.mu.Unlock()
	close(f.done)
}
