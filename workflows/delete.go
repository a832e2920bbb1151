package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// deleteChildrenVersion marks the runs whose cascading delete deletes the
// child apps of an app of apps; before it, they kept running.
const deleteChildrenVersion = "delete-children"

// deleteChildren starts deleting the child apps this app of apps created,
// each as its own finalizers say, once its resources are gone (regionsDone),
// or returns nil when it has none.
func (s *appState) deleteChildren(ctx workflow.Context, regionsDone bool) workflow.Future {
	if !regionsDone || len(s.ChildApps) == 0 || changeVersion(ctx, deleteChildrenVersion) == workflow.DefaultVersion {
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

// deleteGoneRegionsVersion marks the runs whose cascading delete leaves
// out the destinations that no longer name a region (its cluster Secret
// was removed), as Argo CD deletes an app whose cluster is gone without
// touching its resources; before it, the delete failed there and the app
// was kept.
const deleteGoneRegionsVersion = "delete-gone-regions"

// deleteTargets are the destinations a cascading delete deletes from:
// all but those whose region is gone, whose resources stay as they are.
func (s *appState) deleteTargets(ctx workflow.Context) []app.Target {
	dests := s.destinations()
	var kept []app.Target
	var gone []string
	for _, d := range dests {
		if s.regionGone(d) {
			gone = append(gone, s.destinationName(d))
			continue
		}
		kept = append(kept, d)
	}
	if len(gone) == 0 || changeVersion(ctx, deleteGoneRegionsVersion) == workflow.DefaultVersion {
		return dests
	}
	workflow.GetLogger(ctx).Warn("delete: the app's destinations name no region any more; their resources are left as they are",
		"app", s.app.Metadata.Name, "destinations", gone)
	return kept
}

// regionGone: d names no region the configuration knows now: a server no
// region has, or, when the regions are listed, a name none of them has.
func (s *appState) regionGone(d app.Target) bool {
	if d.Region == "" {
		return true
	}
	rc := s.cfg.Regions
	if rc.Open() {
		return false // any name is a region that a worker may serve
	}
	_, ok := rc.ByName(d.Region)
	return !ok
}

// destinationName is how the spec names the destination d: its region, or
// the server that named a region no more.
func (s *appState) destinationName(d app.Target) string {
	if d.Region != "" {
		return d.Region
	}
	for _, dest := range s.app.DestinationList() {
		if dest.Name == "" && dest.Namespace == d.Namespace {
			return dest.Server
		}
	}
	return "(a server no region has)"
}
