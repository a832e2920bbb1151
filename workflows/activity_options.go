package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Timeouts of activities. A region whose workers are gone is noticed by a
// compare after compareScheduleToStart (and its sync is skipped then); a
// sync waits regionScheduleToStart for a worker; a worker that dies
// mid-render, mid-compare or mid-sync is noticed after activityHeartbeat.
const (
	compareScheduleToStart = 20 * time.Second
	regionScheduleToStart  = time.Minute
	compareTimeout         = 5 * time.Minute
	syncTimeout            = 30 * time.Minute
	activityHeartbeat      = 10 * time.Second
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
var permanent = []string{ErrInvalidManifests, ErrInvalidSource, ErrWrongRegion}

var nonRetryable = append([]string{ErrSyncFailed}, permanent...)

func activityRetry(maxAttempts int32) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        30 * time.Second,
		MaximumAttempts:        maxAttempts,
		NonRetryableErrorTypes: nonRetryable,
	}
}

// The option builders take the activity's summary (summaries.go): the
// Web UI shows it in place of the bare activity type.

func resolveCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: resolveTimeout,
		RetryPolicy:         activityRetry(5),
		Summary:             summary,
	})
}

func renderCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             summary,
		TaskQueue:           TaskQueue,
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
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:                compareSummary(region),
		TaskQueue:              RegionQueue(region),
		ScheduleToStartTimeout: compareScheduleToStart,
		StartToCloseTimeout:    compareTimeout,
		HeartbeatTimeout:       activityHeartbeat,
		RetryPolicy:            activityRetry(3),
	})
}

func syncCtx(ctx workflow.Context, region, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:                summary,
		TaskQueue:              RegionQueue(region),
		ScheduleToStartTimeout: regionScheduleToStart,
		StartToCloseTimeout:    syncTimeout,
		HeartbeatTimeout:       activityHeartbeat,
		// Apply is idempotent; a sync that dies with its worker is resumed by another.
		RetryPolicy: activityRetry(10),
	})
}
