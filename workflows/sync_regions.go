package workflows

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// syncRegions runs the Sync activity in the given regions in parallel (and
// the child apps' sync, withChildren) and folds the live state each region
// reports into the status.
// p are the operation's parameters, for a rollout stage those of the stage.
func (s *appState) syncRegions(ctx workflow.Context, op *operation, p syncParams, dests []app.Target, withChildren bool) ([]app.ResourceResult, error) {
	dests, skipped := s.reachable(dests)
	rs := &regionSyncs{byRegion: make(map[string][]app.ResourceStatus, len(dests)),
		regionErrs: make(map[string]error), unanswered: make(map[string]error)}
	if op.hooks != nil && len(dests) > 0 {
		ran, silent, err := s.preSync(ctx, op, dests)
		if rs.results = ran; err != nil {
			return rs.results, err
		}
		dests = s.leaveOutSilent(ctx, op, rs, dests, silent)
	}
	futures := s.startSyncs(ctx, op, p, dests)
	if withChildren {
		s.foldChildren(ctx, p, rs, s.syncChildren(ctx, p))
	}
	sel := workflow.NewSelector(ctx)
	for i, d := range dests {
		sel.AddFuture(futures[i], func(f workflow.Future) { s.foldRegion(ctx, op, p, rs, d, f) })
	}
	for range dests {
		sel.Select(ctx)
	}
	if len(skipped) > 0 {
		op.skippedUnreachable = true
		if len(dests) == 0 {
			rs.failed = append(rs.failed, "every region is unreachable: "+strings.Join(skipped, ", "))
		} else {
			op.state.Message = "skipped unreachable regions " + strings.Join(skipped, ", ") + ": they sync when they answer"
		}
	}
	if err := rs.outcome(); err != nil {
		return append(rs.results, s.syncFail(ctx, op, dests, err)...), err
	}
	return rs.results, nil
}

// leaveOutSilent drops from dests the regions whose PreSync hooks ended
// Unreachable (versionPreSyncUnreachable): each is shown Unreachable at
// once and counts as a region whose sync failed Unreachable; the others go
// on to their sync.
func (s *appState) leaveOutSilent(ctx workflow.Context, op *operation, rs *regionSyncs, dests []app.Target, silent map[string]error) []app.Target {
	if len(silent) == 0 {
		return dests
	}
	for _, region := range workflow.DeterministicKeys(silent) {
		err := silent[region]
		rs.regionErrs[region], rs.unanswered[region] = err, err
		rs.failed = append(rs.failed, fmt.Sprintf("%s: %s", region, rootMessage(ctx, err)))
	}
	s.setResources(ctx, op.target.Commit(), rs.byRegion, rs.unanswered)
	s.publish(ctx)
	return slices.DeleteFunc(slices.Clone(dests), func(d app.Target) bool { return silent[d.Region] != nil })
}

// reachable drops the regions the last compare found unreachable, or whose
// compare has not answered yet: they are skipped, not waited for, and the
// app syncs them once they answer again.
func (s *appState) reachable(dests []app.Target) (reachable []app.Target, skipped []string) {
	reachable = slices.DeleteFunc(slices.Clone(dests), func(d app.Target) bool {
		if s.Status.Regions[d.Region].Unreachable || s.isStraggler(d.Region) {
			skipped = append(skipped, d.Region)
			return true
		}
		return false
	})
	return reachable, skipped
}

// startSyncs starts every region's Sync activity (with its Sync hooks,
// when the operation has some).
func (s *appState) startSyncs(ctx workflow.Context, op *operation, p syncParams, dests []app.Target) []workflow.Future {
	activityName, syncOpID, options := s.syncActivity(op)
	futures := make([]workflow.Future, len(dests))
	for i, d := range dests {
		summary := syncSummary(d.Region, p, activityName == contract.ActivitySyncWithHooks)
		futures[i] = workflow.ExecuteActivity(options(ctx, d.Region, summary), activityName, contract.SyncInput{
			Target: op.target, Region: d.Region, Namespace: d.Namespace, OperationID: syncOpID, Inventory: s.inventory(d.Region),
			Prune: p.prune, DryRun: p.dryRun, SyncOptions: s.syncOptions(p), HealthTimeout: p.healthTimeout(),
			IgnoreDifferences: s.app.Spec.IgnoreDifferences, WaitHealthy: p.staged, PruneConfirmed: p.pruneConfirmed,
			NamespaceMetadata: s.app.NamespaceMetadata(), Selection: p.selection, Project: s.app.ProjectOf(),
			OnboardPlace: s.onboardPlace(ctx),
		})
	}
	return futures
}

// versionFailedSyncAnswered: a region whose sync failed for a reason of
// its own without reporting the region's state (a selection that names
// nothing in the app, objects the project refuses, manifests it cannot
// read: refused before anything was applied) answered. It keeps what its
// last compare showed, and is neither shown Unknown nor named in the
// RegionUnreachable condition: the operation says why it failed, as Argo
// CD's operationState does. Only a region that did not answer (isUnreachable)
// is left unknown. Before, every failure without the region's state was
// folded in as a region that did not answer.
const versionFailedSyncAnswered = "failed-sync-answered"

// regionSyncs gathers the answers of an operation's region syncs.
type regionSyncs struct {
	results  []app.ResourceResult
	byRegion map[string][]app.ResourceStatus
	// regionErrs are the regions whose sync failed; unanswered those whose
	// state is unknown: that did not answer (a failed sync that reports
	// the region's state, or fails for a reason of its own, answered:
	// versionFailedSyncAnswered).
	regionErrs, unanswered map[string]error
	// failed says, per region (or the child apps), why it failed.
	failed []string
}

// foldChildren waits for the child apps' sync (nil: none) and compares
// them again.
func (s *appState) foldChildren(ctx workflow.Context, p syncParams, rs *regionSyncs, children workflow.Future) {
	if children == nil {
		return
	}
	var out contract.SyncChildrenResult
	err := children.Get(ctx, &out)
	rs.results = append(rs.results, out.Results...)
	if err != nil {
		rs.failed = append(rs.failed, "child apps: "+rootMessage(ctx, err))
	}
	if !p.dryRun && out.Applied != nil {
		s.ChildApps = out.Applied
	}
	if after := s.compareChildren(ctx); after != nil {
		var cmp contract.CompareChildrenResult
		if err := after.Get(ctx, &cmp); err != nil {
			rs.regionErrs[childrenRegion], rs.unanswered[childrenRegion] = err, err
		} else {
			rs.byRegion[childrenRegion] = cmp.Resources
			s.refusedChildren = cmp.Refused
		}
	}
}

// foldRegion folds one region's answer into the operation and the status.
func (s *appState) foldRegion(ctx workflow.Context, op *operation, p syncParams, rs *regionSyncs, d app.Target, f workflow.Future) {
	var out contract.SyncResult
	err := f.Get(ctx, &out)
	// A sync that failed for good says so inside its result (the results
	// of an activity error are lost); that failure is data in the history,
	// so a recorded run replays as it ran.
	reported := err == nil
	if reported {
		err = out.Failure.Err()
	}
	if op.terminated != "" && temporal.IsCanceledError(err) {
		// Stopped by terminate-op before it answered: the region keeps
		// the state it showed; the app compares it again.
		rs.failed = append(rs.failed, d.Region+": "+terminatedMessage)
		return
	}
	rs.results = append(rs.results, out.Results...)
	rs.results = append(rs.results, s.syncHooksRan(ctx, op, out, err)...)
	op.awaitingPrune = append(op.awaitingPrune, out.AwaitingPrune...)
	switch {
	case err == nil:
		rs.byRegion[d.Region] = out.Resources
	case reported && out.Resources != nil:
		rs.regionErrs[d.Region] = err
		rs.byRegion[d.Region] = out.Resources
	case !isUnreachable(err) && changeVersion(ctx, versionFailedSyncAnswered) >= 1:
		// It answered, with a failure of the sync's own before it
		// applied anything: it keeps the rows of its last compare.
		rs.regionErrs[d.Region] = err
	default:
		rs.regionErrs[d.Region], rs.unanswered[d.Region] = err, err
	}
	if err != nil {
		rs.failed = append(rs.failed, fmt.Sprintf("%s: %s", d.Region, rootMessage(ctx, err)))
	}
	if !p.dryRun {
		s.setResources(ctx, op.target.Commit(), rs.byRegion, rs.unanswered)
		if err == nil {
			s.setSyncedRevision(d.Region, op.target.Commit())
		}
	}
}

// outcome is the error of the region syncs; nil when every one succeeded.
func (rs *regionSyncs) outcome() *syncError {
	if len(rs.failed) == 0 {
		return nil
	}
	return &syncError{msg: "sync failed in " + strings.Join(rs.failed, "; "),
		permanent: allPermanent(rs.regionErrs), unreachable: allUnreachable(rs.regionErrs)}
}
