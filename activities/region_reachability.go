package activities

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/workflows"
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
	if r.DisableLiveCache {
		return nil // no probes: nothing to tell
	}
	err := r.Cluster.Unreachable()
	if err == nil {
		return nil
	}
	return temporal.NewApplicationError(fmt.Sprintf("Unreachable: region %s: its API server does not answer: %s", r.Name, err), workflows.ErrUnreachable)
}
