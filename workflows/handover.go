package workflows

import (
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"go.temporal.io/sdk/workflow"
)

// HandOverManifests runs ActivityHandOver on the control queue.
func (w *Workflows) HandOverManifests(ctx workflow.Context, in contract.HandOverInput) (contract.HandOverResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "Hand over " + in.Target.App + "'s manifests to " + in.Region,
		TaskQueue:           contract.TaskQueue,
		StartToCloseTimeout: contract.HandOverTimeout,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         activityRetry(5),
	})
	var out contract.HandOverResult
	err := workflow.ExecuteActivity(ctx, contract.ActivityHandOver, in).Get(ctx, &out)
	return out, err
}
