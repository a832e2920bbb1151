package workflows

import (
	"cmp"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/internal/app"
)

// ActivityDeleteChildren deletes the child apps of an app of apps (its
// cascading delete), on the control queue.
const ActivityDeleteChildren = "DeleteChildren"

// DeleteChildrenResult says what became of each child app.
type DeleteChildrenResult struct {
	// Deleted are the children deleted (their finalizers decided about
	// their resources).
	Deleted []string `json:"deleted,omitempty"`
	// Refused are the children another owner took over: left alone.
	Refused []string `json:"refused,omitempty"`
	// Kept are the children whose delete failed.
	Kept []string `json:"kept,omitempty"`
}

// deleteChildrenVersion marks the runs whose cascading delete deletes the
// child apps of an app of apps; before it, they kept running.
const deleteChildrenVersion = "delete-children"

// cascades tells whether the delete removes the app's resources: as the
// request says; left out, when it names a propagation policy or the app
// carries Argo CD's resources finalizer, as deleting an Argo CD
// Application object does. A delete by an app of apps or an
// ApplicationSet leaves it out, so the app's own finalizer decides.
func (r DeleteRequest) cascades(a *app.Application) bool {
	if r.Cascade != nil {
		return *r.Cascade
	}
	return r.Propagation != "" || a.CascadeDelete()
}

// propagation is the deletion propagation policy of a cascading delete:
// the request's, else the one the app's resources finalizer names, else
// foreground, as argocd app delete's default.
func (r DeleteRequest) propagation(a *app.Application) string {
	return cmp.Or(r.Propagation, a.DeletePropagation(), app.PropagationForeground)
}

// validate refuses an unknown propagation policy, and one given with a
// delete that keeps the resources.
func (r DeleteRequest) validate(name string) error {
	switch r.Propagation {
	case "", app.PropagationForeground, app.PropagationBackground, app.PropagationOrphan:
	default:
		return fmt.Errorf("app %q: delete propagation policy %q is unknown: want %s, %s or %s", name, r.Propagation,
			app.PropagationForeground, app.PropagationBackground, app.PropagationOrphan)
	}
	if r.Propagation != "" && r.Cascade != nil && !*r.Cascade {
		return fmt.Errorf("app %q: propagation policy %q is for a cascading delete, and cascade is false: leave out one of them", name, r.Propagation)
	}
	return nil
}

// deleteChildren starts deleting the child apps this app of apps created,
// each as its own finalizers say, once its resources are gone (regionsDone),
// or returns nil when it has none.
func (s *appState) deleteChildren(ctx workflow.Context, regionsDone bool) workflow.Future {
	if !regionsDone || len(s.childApps) == 0 || workflow.GetVersion(ctx, deleteChildrenVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	opts := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             "Delete child apps",
		TaskQueue:           TaskQueue,
		StartToCloseTimeout: syncTimeout,
		HeartbeatTimeout:    activityHeartbeat,
		RetryPolicy:         activityRetry(10),
	})
	return workflow.ExecuteActivity(opts, ActivityDeleteChildren, ChildrenInput{Parent: s.app.Metadata.Name, Previous: s.childApps})
}
