package main

import (
	"context"
	"sync"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// viewCache keeps each app's view as the server last queried it, with the
// search attributes the app had then, so that a list of a thousand apps
// queries only those whose attributes moved, not every workflow.
//
// A view is taken from the cache only while the app's attributes are what
// they were when it was queried, no operation of the app runs, the server
// made no change to it since (forget), and it is younger than viewMaxAge:
// what moves no attribute (a second sync of the same revision that ends
// as the first) shows within that.
type viewCache struct {
	mu    sync.Mutex
	m     map[string]cachedView
	swept time.Time // when views older than viewMaxAge were last dropped
}

// viewMaxAge is how long a cached view is used at most.
const viewMaxAge = 2 * time.Minute

type cachedView struct {
	v   *contract.View
	sum contract.Summary
	at  time.Time
}

// get is the cached view of name when sum is still the app's summary.
func (c *viewCache) get(name string, sum contract.Summary) *contract.View {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[name]
	if !ok || !summaryEqual(e.sum, sum) || sum.Operation == string(app.OperationRunning) || time.Since(e.at) > viewMaxAge {
		return nil
	}
	return e.v
}

func (c *viewCache) put(name string, sum contract.Summary, v *contract.View) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedView{}
	}
	now := time.Now()
	c.m[name] = cachedView{v: v, sum: sum, at: now}
	if now.Sub(c.swept) > viewMaxAge { // deleted apps' views go too
		c.swept = now
		for k, e := range c.m {
			if now.Sub(e.at) > viewMaxAge {
				delete(c.m, k)
			}
		}
	}
}

// forget drops name's view: the server changed the app.
func (c *viewCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, name)
}

// views answers the views of names, whose summaries are sums: from the
// cache where it may, the others queried (16 at a time) and kept.
func (s *server) views(ctx context.Context, names []string, sums map[string]contract.Summary) []*contract.View {
	out := make([]*contract.View, len(names))
	var ask []string
	var at []int
	for i, name := range names {
		if out[i] = s.cache.get(name, sums[name]); out[i] == nil {
			ask, at = append(ask, name), append(at, i)
		}
	}
	for j, v := range s.queryAll(ctx, ask) {
		if v != nil {
			s.cache.put(ask[j], sums[ask[j]], v)
			out[at[j]] = v
		}
	}
	return out
}
