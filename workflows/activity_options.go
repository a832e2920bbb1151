package workflows

import (
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Timeouts of activities. A region whose workers are gone is noticed by a
// compare after compareScheduleToStart (and its sync is skipped then); a
// sync waits regionScheduleToStart for a worker; a worker that dies
// mid-render is noticed after activityHeartbeat, mid-compare after
// compareHeartbeat, mid-sync or mid-hook after writeHeartbeat.
//
// The SDK sends an activity's heartbeats every 0.8 of its heartbeat
// timeout, or every 5 s as the worker bounds it (worker/main.go), and no
// beat reaching the server within the timeout times a live activity out.
// A write timed out so is redone whole, adding its load where the server
// is already slow: with 10 s, a fleet of 10,000 new apps on a loaded
// Temporal cluster had about one region activity in eight timed out while
// it still ran. A region's writes (a sync, its hooks) get 30 s, about five
// beats' tries. A compare is cheap to redo and its region's failover
// should be quick: it gets 20 s, about three tries (at 10 s, 63 live
// compares were timed out while 5,000 new apps onboarded on two cores).
const (
	compareScheduleToStart = 20 * time.Second
	regionScheduleToStart  = time.Minute
	compareTimeout         = 5 * time.Minute
	syncTimeout            = 30 * time.Minute
	activityHeartbeat      = 10 * time.Second
	compareHeartbeat       = 20 * time.Second
	writeHeartbeat         = 30 * time.Second
	// A sync waits this long for what it applied to become healthy; then
	// the app looks again every settlePoll until nothing is Progressing, as
	// Argo CD reports health after the sync operation ends. A rollout stage
	// must be healthy before the next, so it waits stageHealthTimeout.
	healthTimeout      = 30 * time.Second
	stageHealthTimeout = 5 * time.Minute
	settlePoll         = 5 * time.Second
	settleWindow       = 5 * time.Minute
	renderTimeout      = 10 * time.Minute
	resolveTimeout     = time.Minute
)

// permanent errors fail an operation without the retries of syncPolicy.retry.
var permanent = []string{contract.ErrInvalidManifests, contract.ErrInvalidSource, contract.ErrWrongRegion}

var nonRetryable = append([]string{contract.ErrSyncFailed}, permanent...)

func activityRetry(maxAttempts int32) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        30 * time.Second,
		MaximumAttempts:        maxAttempts,
		NonRetryableErrorTypes: nonRetryable,
	}
}

func resolveCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: resolveTimeout,
		RetryPolicy:         activityRetry(5),
		Summary:             summary,
	})
}

func renderCtx(ctx workflow.Context, summary string) workflow.Context {
	return withActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             summary,
		TaskQueue:           contract.TaskQueue,
		StartToCloseTimeout: renderTimeout,
		HeartbeatTimeout:    activityHeartbeat,
		RetryPolicy:         activityRetry(5),
	})
}

// renderLocalCtx: a new app's first render, in the workflow task that
// resolved its revision (onboard.go).
func renderLocalCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: renderTimeout,
		RetryPolicy:         activityRetry(5),
		Summary:             summary,
	})
}

func compareCtx(ctx workflow.Context, region string) workflow.Context {
	return withActivityOptions(ctx, workflow.ActivityOptions{
		Summary:                compareSummary(region),
		TaskQueue:              regionQueue(ctx, region),
		ScheduleToStartTimeout: compareScheduleToStart,
		StartToCloseTimeout:    compareTimeout,
		HeartbeatTimeout:       compareHeartbeat,
		RetryPolicy:            activityRetry(3),
	})
}

func syncCtx(ctx workflow.Context, region, summary string) workflow.Context {
	return withActivityOptions(ctx, workflow.ActivityOptions{
		Summary:                summary,
		TaskQueue:              regionQueue(ctx, region),
		ScheduleToStartTimeout: regionScheduleToStart,
		StartToCloseTimeout:    syncTimeout,
		HeartbeatTimeout:       writeHeartbeat,
		// Apply is idempotent; a sync that dies with its worker is resumed by another.
		RetryPolicy: activityRetry(10),
	})
}
