package webhook

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Run processes accepted deliveries with Options.Workers goroutines until
// ctx ends; then it refuses new ones (503) and gives those in flight or
// queued Options.DrainTimeout to be signalled.
func (r *Receiver) Run(ctx context.Context) {
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		r.stopping.Store(true)
		time.AfterFunc(r.opts.DrainTimeout, cancel)
	})
	defer stop()
	var wg sync.WaitGroup
	for range r.opts.Workers {
		wg.Go(func() {
			for {
				select {
				case d := <-r.queue:
					r.process(work, d)
				case <-ctx.Done():
					for {
						select {
						case d := <-r.queue:
							r.process(work, d)
						default:
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
}

// process signals every app that tracks the repository of each push: those
// the index knows at once, then those a listing the index was due for adds.
func (r *Receiver) process(ctx context.Context, d delivery) {
	var wg sync.WaitGroup
	for i, p := range d.pushes {
		// A push not signalled to every app is forgotten, so that a
		// redelivery can retry it.
		forget := sync.OnceFunc(func() { r.dedupe.Forget(context.WithoutCancel(ctx), d.keys[i]) })
		apps, stale, err := r.index.Lookup(ctx, p.RepoKeys())
		if err != nil {
			r.metrics.failures.WithLabelValues("lookup").Inc()
			r.log.Error("webhook: listing the apps failed; the push is forgotten so a redelivery can retry",
				"repo", p.RepoURLs[0], "ref", p.Ref, "error", err)
			forget()
			continue
		}
		if len(apps) == 0 {
			r.log.Debug("webhook: no app tracks the repository", "repo", p.RepoURLs[0], "ref", p.Ref)
			continue
		}
		r.signalAll(ctx, &wg, apps, p, forget)
		if !stale {
			continue
		}
		added, err := r.index.Added(ctx, p.RepoKeys(), apps)
		if err != nil {
			r.metrics.failures.WithLabelValues("lookup").Inc()
			r.log.Error("webhook: listing the apps again failed; the apps listed before were refreshed, the push is forgotten so a redelivery can find new ones",
				"repo", p.RepoURLs[0], "ref", p.Ref, "error", err)
			forget()
			continue
		}
		r.signalAll(ctx, &wg, added, p, forget)
	}
	wg.Wait()
}

// signalAll signals each app the push, up to Options.SignalConcurrency at once;
// forget runs when one fails.
func (r *Receiver) signalAll(ctx context.Context, wg *sync.WaitGroup, apps []Match, p Push, forget func()) {
	if len(apps) == 0 {
		return
	}
	r.log.Info("webhook: refreshing the apps that track the repository", "repo", p.RepoURLs[0], "ref", p.Ref,
		"after", p.After, "apps", len(apps))
	for _, m := range apps {
		if err := r.signals.Acquire(ctx, 1); err != nil {
			forget()
			return
		}
		wg.Go(func() {
			defer r.signals.Release(1)
			if !r.signal(ctx, m, p) {
				forget()
			}
		})
	}
}

// signal sends one app the push; false when it failed.
func (r *Receiver) signal(ctx context.Context, m Match, p Push) bool {
	name := m.App
	sctx, cancel := context.WithTimeout(ctx, r.opts.SignalTimeout)
	defer cancel()
	start := time.Now()
	err := r.refresher.Refresh(sctx, m, p)
	switch {
	case err == nil:
		r.metrics.signals.Inc()
		r.log.Debug("webhook: refresh signalled", "app", name, "ref", p.Ref, "after", p.After,
			"took", time.Since(start).Round(time.Millisecond))
		return true
	case errors.Is(err, ErrAppGone):
		r.index.Invalidate()
		return true
	default:
		r.metrics.failures.WithLabelValues("signal").Inc()
		r.log.Warn("webhook: refresh signal failed", "app", name, "ref", p.Ref, "error", err)
		return false
	}
}
