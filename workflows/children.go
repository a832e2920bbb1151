package workflows

import (
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// childrenRegion is the "region" of an app of apps' child Applications in
// its status: they run as apps on the control queue, not in a cluster.
const childrenRegion = ""

// childrenSettling reports whether a child app is still on its way: an app
// of apps then looks again every settlePoll, so that its health follows
// its children's. A child refused for its owner waits for a change, not
// for time.
func (s *appState) childrenSettling() bool {
	for _, r := range s.Status.Resources {
		if r.Region == childrenRegion && !slices.Contains(s.refusedChildren, r.Name) &&
			(r.Status != app.SyncStatusSynced || r.Health != app.HealthHealthy) {
			return true
		}
	}
	return false
}

func (s *appState) hasChildren() bool {
	return (s.Rendered != nil && len(s.Rendered.Children) > 0) || len(s.ChildApps) > 0
}

func (s *appState) childrenInput(p syncParams) contract.ChildrenInput {
	in := contract.ChildrenInput{Parent: s.app.Metadata.Name, Previous: s.ChildApps, Prune: p.prune, DryRun: p.dryRun,
		Project: s.app.ProjectOf()}
	if s.Rendered != nil {
		in.Children = s.Rendered.Children
	}
	return in
}

func childrenCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		Summary:             summary,
		TaskQueue:           contract.TaskQueue,
		StartToCloseTimeout: compareTimeout,
		RetryPolicy:         activityRetry(5),
	})
}

// compareChildren starts comparing the child apps, or returns nil when the
// app has none.
func (s *appState) compareChildren(ctx workflow.Context) workflow.Future {
	if !s.hasChildren() {
		return nil
	}
	return workflow.ExecuteActivity(childrenCtx(ctx, childrenSummary("Compare", syncParams{})), contract.ActivityCompareChildren, s.childrenInput(syncParams{}))
}

// syncChildren starts creating, updating and pruning the child apps, or
// returns nil when the app has none.
func (s *appState) syncChildren(ctx workflow.Context, p syncParams) workflow.Future {
	if !s.hasChildren() {
		return nil
	}
	return workflow.ExecuteActivity(childrenCtx(ctx, childrenSummary("Sync", p)), contract.ActivitySyncChildren, s.childrenInput(p))
}
