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

// process signals every app that tracks the repository of each push.
func (r *Receiver) process(ctx context.Context, d delivery) {
	var wg sync.WaitGroup
	for i, p := range d.pushes {
		apps, err := r.index.Lookup(ctx, p.RepoKeys())
		if err != nil {
			r.metrics.failures.WithLabelValues("lookup").Inc()
			r.log.Error("webhook: listing the apps failed; the push is forgotten so a redelivery can retry",
				"repo", p.RepoURLs[0], "ref", p.Ref, "error", err)
			r.dedupe.Forget(ctx, d.keys[i])
			continue
		}
		if len(apps) == 0 {
			r.log.Debug("webhook: no app tracks the repository", "repo", p.RepoURLs[0], "ref", p.Ref)
			continue
		}
		r.log.Info("webhook: refreshing the apps that track the repository", "repo", p.RepoURLs[0], "ref", p.Ref,
			"after", p.After, "apps", len(apps))
		var failed sync.Once
		for _, m := range apps {
			if err := r.signals.Acquire(ctx, 1); err != nil {
				failed.Do(func() { r.dedupe.Forget(context.WithoutCancel(ctx), d.keys[i]) })
				break
			}
			wg.Go(func() {
				defer r.signals.Release(1)
				if !r.signal(ctx, m, p) {
					failed.Do(func() { r.dedupe.Forget(context.WithoutCancel(ctx), d.keys[i]) })
				}
			})
		}
	}
	wg.Wait()
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
