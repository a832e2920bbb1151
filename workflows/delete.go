package workflows

import (
	"github.com/ferry-gitops/ferry/contract"
	"go.temporal.io/sdk/workflow"
)

// deleteChildrenVersion marks the runs whose cascading delete deletes the
// child apps of an app of apps; before it, they kept running.
const deleteChildrenVersion = "delete-children"

// deleteChildren starts deleting the child apps this app of apps created,
// each as its own finalizers say, once its resources are gone (regionsDone),
// or returns nil when it has none.
func (s *appState) deleteChildren(ctx workflow.Context, regionsDone bool) workflow.Future {
	if !regionsDone || len(s.ChildApps) == 0 || workflow.GetVersion(ctx, deleteChildrenVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	opts := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "Delete child apps",
		TaskQueue:           contract.TaskQueue,
		StartToCloseTimeout: syncTimeout,
		HeartbeatTimeout:    activityHeartbeat,
		RetryPolicy:         activityRetry(10),
	})
	return workflow.ExecuteActivity(opts, contract.ActivityDeleteChildren, contract.ChildrenInput{Parent: s.app.Metadata.Name, Previous: s.ChildApps})
}
