package activities

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// What a drift signal's By says when the region's API server stopped
// answering, or answers again (kube.WatchReachability): the live cache
// cannot see the app's objects meanwhile, so every app this worker has
// served compares at once and shows the region as its compare finds it
// (Unreachable) instead of as it was, until its next full compare.
const (
	driftUnreachable = "unreachable"
	driftReachable   = "reachable"
)

// onReachability signals every app this worker has served that the
// region's API server stopped answering, or answers again.
func (r *Region) onReachability(st kube.Reachability) {
	d := &r.drift
	d.mu.Lock()
	apps := slices.Sorted(maps.Keys(d.apps))
	d.mu.Unlock()
	by := driftReachable
	if st.Reachable {
		slog.Info("region: the API server answers again; signalling its apps", "region", r.Name, "apps", len(apps))
	} else {
		by = driftUnreachable
		slog.Warn("region: the API server does not answer; signalling its apps", "region", r.Name, "apps", len(apps), "error", st.Err)
	}
	for _, a := range apps {
		r.onDrift(kube.Drift{App: a, By: []string{by}})
	}
}

// unanswered is the error of a compare while the probes find the region's
// API server silent: Unreachable at once, rather than an answer from a
// cache that no longer sees the region, or a wait on a server that answers
// nothing.
func (r *Region) unanswered() error {
	err := r.silence()
	if err == nil {
		return nil
	}
	return temporal.NewApplicationError(fmt.Sprintf("Unreachable: region %s: its API server does not answer: %s", r.Name, err), contract.ErrUnreachable)
}

// silence is why the probes find the region's API server silent; nil
// while it answers, and without probes (no live cache).
func (r *Region) silence() error {
	if r.DisableLiveCache || r.Cluster == nil {
		return nil
	}
	return r.Cluster.Unreachable()
}

// silenceCheck is how often a sync looks whether the probes have found
// its region's API server silent.
const silenceCheck = time.Second

// whileAnswering is ctx until silence reports the region silent (looked at
// once at once, then every `every`): a request to an API server that
// stopped answering mid-sync (frozen: it accepts connections and answers
// nothing) would hang as long as the server is stopped, and a wave's wait
// would read a cache that no longer sees the region. The sync ends
// instead, as soon as the probes tell (kube.WatchReachability: two probes
// in a row), and its region is shown Unreachable while the other regions'
// results stand. stop ends the watch and returns the silence that
// cancelled ctx, nil when none did.
func whileAnswering(ctx context.Context, silence func() error, every time.Duration) (_ context.Context, stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	var found error
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := silence(); err != nil {
				found = err
				cancel()
				return
			}
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return ctx, func() error {
		close(done)
		<-exited
		cancel()
		return found
	}
}

// answering runs work while the region answers (whileAnswering): a sync,
// a phase's hooks, a deletion of hook objects. It returns the silence that
// ended work, nil when none did, beside work's own error.
func (r *Region) answering(ctx context.Context, work func(context.Context) error) (silent, err error) {
	return answering(ctx, r.silence, silenceCheck, work)
}

func answering(ctx context.Context, silence func() error, every time.Duration, work func(context.Context) error) (silent, err error) {
	ctx, stop := whileAnswering(ctx, silence, every)
	err = work(ctx)
	return stop(), err
}

// silencedMessage says that the region's API server stopped answering
// during what (the sync, its PreSync hooks, ...), and what follows.
func (r *Region) silencedMessage(during string, err error) string {
	return fmt.Sprintf("Unreachable: region %s: its API server stopped answering during %s (%s); what was applied before stays, and the region syncs again once it answers",
		r.Name, during, err)
}

// silencedFailure is the failure of a sync that whileAnswering ended: the
// region is Unreachable, and what it applied before stays. It travels in
// the result, with the changes so far, rather than as a retryable error:
// another attempt would hang as this one did until the region answers,
// holding the operation (and the other regions' next sync) meanwhile. The
// app syncs the region again once it answers.
func (r *Region) silencedFailure(err error) *contract.SyncFailure {
	return &contract.SyncFailure{Type: contract.ErrUnreachable, Message: r.silencedMessage("the sync", err)}
}

// silencedHooks is the error of a hook activity that whileAnswering ended:
// the non-retryable ErrUnreachable, for the reason silencedFailure gives.
// It carries no results: the hooks it ran are the region's to delete, and
// a deletion would wait on the silent server as the hooks did; the next
// run's BeforeHookCreation replaces them.
func (r *Region) silencedHooks(during string, err error) error {
	return temporal.NewNonRetryableApplicationError(r.silencedMessage(during, err), contract.ErrUnreachable, nil)
}
