package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/internal/app"
)

type syncParams struct {
	prune  bool
	dryRun bool
	// staged: a rollout stage, which must be healthy before the next.
	staged bool
	// stage names the rollout stage ("stage 1/3") in activity summaries.
	stage string
	// pruneConfirmed: ferry app confirm let the prunes of Prune=confirm go.
	pruneConfirmed bool
}

func (p syncParams) healthTimeout() time.Duration {
	if p.staged {
		return stageHealthTimeout
	}
	return healthTimeout
}

// manualSync runs a sync update: resolve and render the requested revision
// (or the rollback's), then the operation.
func (s *appState) manualSync(ctx workflow.Context, req SyncRequest) (*app.OperationState, error) {
	if err := s.refuseManualSync(ctx); err != nil {
		return nil, err
	}
	revision, src, err := s.syncSource(ctx, req)
	if err != nil {
		return nil, err
	}
	if revision == "" {
		revision = src.Revision()
	}
	target, err := s.targetFrom(ctx, src, revision, true, false)
	if err != nil {
		now := workflow.Now(ctx)
		s.operationSeq++
		op := &app.OperationState{
			ID: s.operationID(), Revision: revision, Phase: app.OperationError,
			Message: err.Error(), StartedAt: now, FinishedAt: &now,
		}
		s.status.OperationState = op
		s.publish(ctx)
		return op, nil
	}
	op := s.runOperation(ctx, target, syncParams{prune: req.Prune, dryRun: req.DryRun})
	return op, nil
}

// runOperation syncs target to every region in parallel, retrying the whole
// operation per syncPolicy.retry, and records the outcome.
func (s *appState) runOperation(ctx workflow.Context, target Target, p syncParams) *app.OperationState {
	s.operationSeq++
	op := &app.OperationState{
		ID: s.operationID(), Revision: target.Commit(), Phase: app.OperationRunning,
		Message: "syncing regions " + strings.Join(s.regionNames(), ", "), StartedAt: workflow.Now(ctx),
	}
	s.status.OperationState = op
	s.publish(ctx)
	s.hookOp = s.beginHooks(ctx, p)
	defer func() { s.hookOp = nil }()

	retry := s.app.Retry()
	for attempt := int64(0); ; attempt++ {
		s.skippedUnreachable, s.awaitingPrune = false, nil
		if s.hookOp != nil {
			s.hookOp.attempt = attempt
		}
		results, err := s.syncStages(ctx, target, op.ID, p)
		var se *syncError
		s.lastOpUnreachable = s.skippedUnreachable || (errors.As(err, &se) && se.unreachable)
		op.Results = results
		if err == nil {
			var again bool
			if again, err = s.awaitPruneConfirmation(ctx, op, &p); again {
				attempt-- // the same attempt, now confirmed
				continue
			}
		}
		if err == nil {
			op.Phase = app.OperationSucceeded
			if !s.skippedUnreachable {
				op.Message = "successfully synced (all tasks run)"
			}
			break
		}
		op.Phase, op.Message = app.OperationFailed, err.Error()
		if isPermanent(err) || !retry.ShouldRetry(attempt) {
			break
		}
		op.RetryCount = attempt + 1
		op.Phase = app.OperationRunning
		op.Message = fmt.Sprintf("retrying (attempt %d) after: %s", attempt+1, err)
		s.publish(ctx)
		backoff := workflow.NewTimerWithOptions(ctx, retry.Delay(attempt), workflow.TimerOptions{Summary: retrySummary(op.RetryCount)})
		if err := backoff.Get(ctx, nil); err != nil {
			op.Phase, op.Message = app.OperationError, err.Error()
			break
		}
	}
	finished := workflow.Now(ctx)
	op.FinishedAt = &finished
	if op.Phase == app.OperationSucceeded && s.hookOp != nil {
		s.startPostSync(ctx, target, op)
	}
	s.appMetrics(ctx).WithTags(map[string]string{"phase": string(op.Phase)}).Counter("ferry_app_sync_total").Inc(1)
	s.appMetrics(ctx).Timer("ferry_app_sync_duration_seconds").Record(finished.Sub(op.StartedAt))
	if op.Phase == app.OperationSucceeded && !p.dryRun {
		s.clearCondition(conditionSyncError)
		s.status.AddHistory(historyEntry(target, finished), s.app.HistoryLimit())
	}
	s.publish(ctx)
	return op
}

// syncRegions runs the Sync activity in the given regions in parallel (and
// the child apps' sync, withChildren) and folds the live state each region
// reports into the status.
func (s *appState) syncRegions(ctx workflow.Context, target Target, opID string, p syncParams,
	dests []app.Target, withChildren bool) ([]app.ResourceResult, error) {
	var opts []string
	if sp := s.app.Spec.SyncPolicy; sp != nil {
		opts = sp.SyncOptions
	}
	// Regions the last compare found unreachable, or whose compare has not
	// answered yet, are skipped, not waited for; the app syncs them once
	// they answer again.
	var skipped []string
	dests = slices.DeleteFunc(slices.Clone(dests), func(d app.Target) bool {
		if s.status.Regions[d.Region].Unreachable || s.isStraggler(d.Region) {
			skipped = append(skipped, d.Region)
			return true
		}
		return false
	})
	var results []app.ResourceResult
	if s.hookOp != nil && len(dests) > 0 {
		ran, err := s.preSync(ctx, target, dests)
		if results = ran; err != nil {
			return results, err
		}
	}
	activityName, syncOpID, options := s.syncActivity(opID)
	futures := make([]workflow.Future, len(dests))
	for i, d := range dests {
		summary := syncSummary(d.Region, p, activityName == ActivitySyncWithHooks)
		futures[i] = workflow.ExecuteActivity(options(ctx, d.Region, summary), activityName, SyncInput{
			Target: target, Region: d.Region, Namespace: d.Namespace, OperationID: syncOpID, Known: s.knownKeys(d.Region),
			Prune: p.prune, DryRun: p.dryRun, SyncOptions: opts, HealthTimeout: p.healthTimeout(),
			IgnoreDifferences: s.app.Spec.IgnoreDifferences, WaitHealthy: p.staged, PruneConfirmed: p.pruneConfirmed,
			NamespaceMetadata: s.app.NamespaceMetadata(),
		})
	}
	var children workflow.Future
	if withChildren {
		children = s.syncChildren(ctx, p)
	}
	byRegion := make(map[string][]app.ResourceStatus, len(dests))
	// regionErrs are the regions whose sync failed; unanswered those whose
	// state is unknown (a failed sync that reports the region's state
	// answered).
	regionErrs, unanswered := make(map[string]error), make(map[string]error)
	var failed []string
	if children != nil {
		var out SyncChildrenResult
		err := children.Get(ctx, &out)
		results = append(results, out.Results...)
		if err != nil {
			failed = append(failed, "child apps: "+rootMessage(err))
		}
		if !p.dryRun && out.Applied != nil {
			s.childApps = out.Applied
		}
		if after := s.compareChildren(ctx); after != nil {
			var cmp CompareChildrenResult
			if err := after.Get(ctx, &cmp); err != nil {
				regionErrs[childrenRegion], unanswered[childrenRegion] = err, err
			} else {
				byRegion[childrenRegion] = cmp.Resources
				s.refusedChildren = cmp.Refused
			}
		}
	}
	sel := workflow.NewSelector(ctx)
	for i, d := range dests {
		sel.AddFuture(futures[i], func(f workflow.Future) {
			var out SyncResult
			err := f.Get(ctx, &out)
			// A sync that failed for good says so inside its result (the
			// results of an activity error are lost); that failure is data
			// in the history, so a recorded run replays as it ran.
			reported := err == nil
			if reported {
				err = out.Failure.Err()
			}
			results = append(results, out.Results...)
			results = append(results, s.syncHooksRan(ctx, out, err)...)
			s.awaitingPrune = append(s.awaitingPrune, out.AwaitingPrune...)
			switch {
			case err == nil:
				byRegion[d.Region] = out.Resources
			case reported && out.Resources != nil:
				regionErrs[d.Region] = err
				byRegion[d.Region] = out.Resources
			default:
				regionErrs[d.Region], unanswered[d.Region] = err, err
			}
			if err != nil {
				failed = append(failed, fmt.Sprintf("%s: %s", d.Region, rootMessage(err)))
			}
			if !p.dryRun {
				s.setResources(target.Commit(), byRegion, unanswered)
				if err == nil {
					s.setSyncedRevision(d.Region, target.Commit())
				}
			}
		})
	}
	for range dests {
		sel.Select(ctx)
	}
	if len(skipped) > 0 {
		s.skippedUnreachable = true
		if len(dests) == 0 {
			failed = append(failed, "every region is unreachable: "+strings.Join(skipped, ", "))
		} else {
			s.status.OperationState.Message = "skipped unreachable regions " + strings.Join(skipped, ", ") + ": they sync when they answer"
		}
	}
	if len(failed) > 0 {
		err := &syncError{msg: "sync failed in " + strings.Join(failed, "; "),
			permanent: allPermanent(regionErrs), unreachable: allUnreachable(regionErrs)}
		return append(results, s.syncFail(ctx, target, dests, err)...), err
	}
	return results, nil
}

// runDelete deletes the app: with cascade, its resources in every region
// first. It reports whether the app is gone; when a region failed, the app
// stays, so that nothing is left half-deleted without an owner.
func (s *appState) runDelete(ctx workflow.Context) bool {
	p := s.deletion
	defer func() { p.done = true }()
	if !p.req.cascades(&s.app) {
		return true
	}
	dests := s.destinations()
	var failed []string
	for {
		futures := make([]workflow.Future, len(dests))
		for i, d := range dests {
			futures[i] = workflow.ExecuteActivity(syncCtx(ctx, d.Region, deleteResourcesSummary(d.Region)), ActivityDeleteResources,
				DeleteInput{App: s.app.Metadata.Name, Region: d.Region, Propagation: p.req.propagation(&s.app), Confirmed: p.confirmed})
		}
		// awaiting: objects marked Delete=confirm held their region's delete.
		var awaiting []app.ResourceKey
		for i, d := range dests {
			var out DeleteResult
			if err := futures[i].Get(ctx, &out); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %s", d.Region, rootMessage(err)))
			}
			awaiting = append(awaiting, out.AwaitingConfirmation...)
		}
		if len(failed) > 0 || len(awaiting) == 0 || p.confirmed {
			break
		}
		if p.err = s.awaitDeleteConfirmation(ctx, awaiting); p.err != nil {
			return false
		}
	}
	if children := s.deleteChildren(ctx, len(failed) == 0); children != nil {
		if err := children.Get(ctx, nil); err != nil {
			failed = append(failed, "child apps: "+rootMessage(err))
		}
	}
	if len(failed) > 0 {
		p.err = fmt.Errorf("app %q: cascading delete failed in %s; the app is kept: fix the region and delete it again",
			s.app.Metadata.Name, strings.Join(failed, "; "))
		return false
	}
	if p.err = s.postDelete(ctx, dests); p.err != nil {
		return false
	}
	return true
}

func (s *appState) operationID() string {
	return fmt.Sprintf("%d", s.operationSeq)
}

type syncError struct {
	msg         string
	permanent   bool
	unreachable bool // only unreachable regions failed
}

func allUnreachable(errs map[string]error) bool {
	for _, err := range errs {
		if !isUnreachable(err) {
			return false
		}
	}
	return len(errs) > 0
}

func (e *syncError) Error() string { return e.msg }

func isPermanent(err error) bool {
	var se *syncError
	return errors.As(err, &se) && se.permanent
}

func allPermanent(errs map[string]error) bool {
	for _, err := range errs {
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || !slices.Contains(permanent, appErr.Type()) {
			return false
		}
	}
	return len(errs) > 0
}

// rootMessage is the innermost message of an activity error, without the
// activity envelope Temporal adds around it.
// isUnreachable reports whether a region's activity failed because the
// region could not be reached: no worker took it in time, a worker died
// without another taking over, or the API server did not answer.
func isUnreachable(err error) bool {
	var timeout *temporal.TimeoutError
	var appErr *temporal.ApplicationError
	var unanswered *unansweredError
	return errors.As(err, &timeout) || (errors.As(err, &appErr) && appErr.Type() == ErrUnreachable) || errors.As(err, &unanswered)
}

func rootMessage(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Error()
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return "Unreachable: no answer from the region's workers (" + timeout.Error() + ")"
	}
	return err.Error()
}
