package workflows

import "go.temporal.io/sdk/workflow"

// changeCancelAwaitTimers: an await's timer is cancelled once its condition
// holds. Before, workflow.AwaitWithOptions left it running, and it fired
// later into a workflow task of its own that did nothing: every signal,
// push or drift that woke an app's poll, and every turn at the onboarding
// gate (a 30-minute timer), cost one more task. (The SDK's own switch for
// this, SDKFlagCancelAwaitTimerOnCondition, is off by default and set only
// through an environment variable.)
const changeCancelAwaitTimers = "cancel-await-timers"

// await is workflow.AwaitWithOptions whose timer is cancelled when cond
// holds first: the cancel is a command of the task that saw cond hold.
func await(ctx workflow.Context, opts workflow.AwaitOptions, cond func() bool) (bool, error) {
	if changeVersion(ctx, changeCancelAwaitTimers) == workflow.DefaultVersion {
		return workflow.AwaitWithOptions(ctx, opts, cond)
	}
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	return workflow.AwaitWithOptions(tctx, opts, cond)
}
