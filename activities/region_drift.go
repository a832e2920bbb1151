package activities

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// Drift signals. A region worker turns its Cluster's live cache on with its
// first activity; from then on a change that someone else makes to a
// resource of an app this worker has served is sent to the app's workflow
// as a refresh signal carrying a contract.Drift, so an app with selfHeal
// is put back in seconds instead of at its next poll, and one without shows
// OutOfSync as soon.
const (
	// driftDelay gathers the changes of one edit (a Deployment and then its
	// status, a namespace's objects going) into one signal.
	driftDelay = 250 * time.Millisecond
	// driftCooldown is the least time between two signals to one app, as
	// Argo CD's self-heal timeout (5 s): a controller that fights Ferry over
	// a field costs a sync every few seconds, not a busy loop. The first
	// change after a quiet spell is signalled after driftDelay.
	driftCooldown = 5 * time.Second
	// healthDelay gathers the health changes of one step of a rollout (the
	// Deployments that turn Available together) into one signal. A change
	// of health alone neither waits out nor starts the cooldown: it costs
	// no sync, each object's health changes once per transition (kube's
	// NoteCompared), and the app compares one signal at a time, so the app
	// shows Healthy within a compare of its last Deployment turning so.
	healthDelay = 50 * time.Millisecond
	// driftKeys bounds the resources one signal names.
	driftKeys = 20
	// driftInFlight bounds the signals a region worker sends at once. When
	// the region's API server stops answering, or answers again, every app
	// the worker served is signalled (region_reachability.go): at 3,000
	// apps on a loaded Temporal, all at once, they timed out together and
	// were all sent again every driftCooldown, and the onboarding under way
	// stalled behind them for minutes. Queued instead, an app's drifts that
	// come meanwhile go out in its one signal.
	driftInFlight = 8
	// driftRetryMax bounds the wait before a failed signal is sent again:
	// driftCooldown after the first failure, twice as long after each next.
	driftRetryMax = 2 * time.Minute
)

// driftSignals debounces drift into refresh signals, per app.
type driftSignals struct {
	once   sync.Once
	mu     sync.Mutex
	client client.Client
	apps   map[string]bool // the apps this worker has served
	queued map[string]*contract.Drift
	sent   map[string]time.Time
	failed map[string]int // the signals to an app that failed in a row
	slots  chan struct{}  // the signals under way, at most driftInFlight
}

// watch turns the live cache on (once), remembers appName as one whose
// drift to report, and the worker's Temporal client to report it with.
func (r *Region) watch(ctx context.Context, appName string) {
	d := &r.drift
	d.once.Do(func() {
		d.apps, d.queued, d.sent = map[string]bool{}, map[string]*contract.Drift{}, map[string]time.Time{}
		d.failed, d.slots = map[string]int{}, make(chan struct{}, driftInFlight)
		if !r.DisableLiveCache && !r.Cluster.LiveCacheEnabled() {
			life := r.Lifetime
			if life == nil {
				life = context.Background()
			}
			r.Cluster.EnableLiveCache(life, r.onDrift)
			r.Cluster.WatchReachability(life, kube.ProbeInterval, r.onReachability)
		}
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	d.apps[appName] = true
	if d.client == nil && activity.IsActivity(ctx) {
		d.client = activity.GetClient(ctx)
	}
}

// onDrift queues a change for its app's next signal.
func (r *Region) onDrift(ev kube.Drift) {
	d := &r.drift
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.apps[ev.App] || d.client == nil {
		return
	}
	q, pending := d.queued[ev.App]
	if !pending {
		q = &contract.Drift{Region: r.Name}
		d.queued[ev.App] = q
		wait := max(driftDelay, time.Until(d.sent[ev.App].Add(driftCooldown)))
		if healthOnly(ev.By) {
			wait = healthDelay
		}
		time.AfterFunc(wait, func() { r.flushDrift(ev.App) })
	}
	// A drift of no object is of the whole region (region_reachability.go).
	if ev.Key != (app.ResourceKey{}) && !slices.Contains(q.Resources, ev.Key) {
		if len(q.Resources) < driftKeys {
			q.Resources = append(q.Resources, ev.Key)
		} else {
			q.More++
		}
	}
	for _, by := range ev.By {
		if !slices.Contains(q.By, by) {
			q.By = append(q.By, by)
		}
	}
}

// flushDrift sends an app's queued drift, once a slot is free (the drift
// that comes meanwhile joins it).
func (r *Region) flushDrift(appName string) {
	d := &r.drift
	d.slots <- struct{}{}
	defer func() { <-d.slots }()
	d.mu.Lock()
	q := d.queued[appName]
	delete(d.queued, appName)
	if q != nil && !healthOnly(q.By) {
		d.sent[appName] = time.Now()
	}
	c := d.client
	d.mu.Unlock()
	if q == nil || c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.SignalWorkflow(ctx, contract.WorkflowID(appName), "", contract.SignalRefresh, contract.RefreshRequest{Drift: q})
	var notFound *serviceerror.NotFound
	switch {
	case err == nil:
		d.mu.Lock()
		delete(d.failed, appName)
		d.mu.Unlock()
		slog.Info("drift: signalled the app", "app", appName, "region", r.Name, "resources", len(q.Resources)+q.More, "by", q.By)
	case errors.As(err, &notFound):
		d.mu.Lock()
		delete(d.apps, appName) // the app is gone
		delete(d.failed, appName)
		d.mu.Unlock()
	default:
		// An idle app may skip its polls' compares while this worker watches
		// it: the signal must get through, so it is sent again.
		d.mu.Lock()
		d.failed[appName]++
		wait := retryWait(d.failed[appName])
		d.mu.Unlock()
		slog.Warn("drift: signal failed; sending it again", "app", appName, "region", r.Name, "error", err, "in", wait)
		r.requeueDrift(appName, q, wait)
	}
}

// retryWait is the wait before a signal that failed n times in a row is
// sent again.
func retryWait(n int) time.Duration {
	wait := driftCooldown
	for i := 1; i < n && wait < driftRetryMax; i++ {
		wait *= 2
	}
	return min(wait, driftRetryMax)
}

// healthOnly tells whether a drift is a change of health alone.
func healthOnly(by []string) bool {
	return len(by) > 0 && !slices.ContainsFunc(by, func(b string) bool { return b != kube.DriftHealth })
}

// requeueDrift puts a drift whose signal failed back in the queue, merged
// with what came since, to be sent after wait.
func (r *Region) requeueDrift(appName string, q *contract.Drift, wait time.Duration) {
	d := &r.drift
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.apps[appName] {
		return
	}
	if cur, pending := d.queued[appName]; pending {
		for _, k := range q.Resources {
			if !slices.Contains(cur.Resources, k) && len(cur.Resources) < driftKeys {
				cur.Resources = append(cur.Resources, k)
			}
		}
		for _, by := range q.By {
			if !slices.Contains(cur.By, by) {
				cur.By = append(cur.By, by)
			}
		}
		return
	}
	d.queued[appName] = q
	time.AfterFunc(wait, func() { r.flushDrift(appName) })
}
