package kube

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
)

// Reachability: while the live cache is on, the region's API server is
// probed (GET /readyz) every ProbeInterval, and at once when an informer's
// list or watch fails. probeFailures probes in a row that fail or do not
// answer within probeTimeout (a busy server may miss one) are reported to
// the listener, and so is the first probe that answers after them: an idle app that leaves its compares out (the cache watches
// it) must hear that the cache no longer sees the region, or it would show
// the region as it was until its next full compare. A stopped API server
// breaks the watches at once; a frozen one (accepting connections and
// answering nothing) keeps them open and silent, which only a probe tells.

// ProbeInterval is how often the API server of a region with a live cache
// is probed.
const ProbeInterval = 5 * time.Second

const (
	probeTimeout  = 10 * time.Second
	probeFailures = 2
)

// Reachability is what a probe found: whether the API server answered,
// and why not.
type Reachability struct {
	Reachable bool
	Err       error
}

type reachabilityProbe struct {
	c     *Cluster
	every time.Duration
	fn    func(Reachability)
	kick  chan struct{}

	mu sync.Mutex
	// failures counts the probes in a row that failed; err is the last
	// one's error, once failures reached probeFailures (nil: reachable).
	failures int
	err      error
}

// WatchReachability probes the API server every interval until ctx ends
// and calls fn when what it finds changes (the first probe that fails, the
// first that answers after one failed). Call it once, after
// EnableLiveCache; the informers' list and watch failures probe at once.
func (c *Cluster) WatchReachability(ctx context.Context, interval time.Duration, fn func(Reachability)) {
	p := &reachabilityProbe{c: c, every: interval, fn: fn, kick: make(chan struct{}, 1)}
	if l := c.live(); l != nil {
		l.mu.Lock()
		l.probe = p
		l.mu.Unlock()
	}
	go p.run(ctx)
}

func (p *reachabilityProbe) run(ctx context.Context) {
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.kick:
		}
		p.probeOnce(ctx)
	}
}

// probeOnce asks the API server whether it is ready, and reports a change.
func (p *reachabilityProbe) probeOnce(ctx context.Context) {
	rc := p.c.discovery.RESTClient()
	if rc == nil {
		return
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	err := rc.Get().AbsPath("/readyz").Do(pctx).Error()
	if ctx.Err() != nil {
		return
	}
	p.mu.Lock()
	was := p.err
	if err == nil {
		p.failures, p.err = 0, nil
	} else if p.failures++; p.failures >= probeFailures {
		p.err = err
	}
	now := p.err
	p.mu.Unlock()
	if (was == nil) != (now == nil) {
		p.fn(Reachability{Reachable: now == nil, Err: now})
	}
}

// watchFailed: an informer's list or watch failed; probe now.
func (p *reachabilityProbe) watchFailed() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// onWatchError is the informers' watch error handler: client-go's default
// (log, back off) and a probe.
func (l *liveCache) onWatchError(ctx context.Context, r *cache.Reflector, err error) {
	cache.DefaultWatchErrorHandler(ctx, r, err)
	l.mu.Lock()
	p := l.probe
	l.mu.Unlock()
	if p != nil {
		p.watchFailed()
	}
}

// Unreachable is why the region's API server does not answer, as the
// probes found (nil while it answers, before any probe, and without a live
// cache).
func (c *Cluster) Unreachable() error {
	l := c.live()
	if l == nil {
		return nil
	}
	l.mu.Lock()
	p := l.probe
	l.mu.Unlock()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}
