package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
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
	// selection narrows a selective sync; nil: the whole app.
	selection *app.Selection
	// options are sync options the request adds (Force, ApplyOutOfSyncOnly).
	options []string
	// retry is the request's retry policy; nil: spec.syncPolicy.retry.
	retry *app.RetryPolicy
}

func (p syncParams) healthTimeout() time.Duration {
	if p.staged {
		return stageHealthTimeout
	}
	return healthTimeout
}

// manualSync runs a sync update: resolve and render the requested revision
// (or the rollback's), then the operation.
func (s *appState) manualSync(ctx workflow.Context, req contract.SyncRequest) (*app.OperationState, error) {
	if err := s.refuseManualSync(ctx); err != nil {
		return nil, err
	}
	if req.Local != nil {
		return s.localSync(ctx, req), nil // sync_local.go
	}
	revision, src, srcs, err := s.syncSource(ctx, req)
	if err != nil {
		return nil, err
	}
	if revision == "" {
		revision = src.Revision()
	}
	target, err := s.targetFrom(ctx, src, srcs, revision, true, false, req.RollbackID == nil && req.Revision != "")
	if err != nil {
		return s.operationFailedEarly(ctx, revision, req, err), nil
	}
	op := s.runOperation(ctx, target, requestParams(ctx, req), opRequest{revision: req.Revision, rollback: req.RollbackID != nil, info: req.Info, initiatedBy: req.InitiatedBy})
	return op.state, nil
}

// operation is the running sync operation, handed from runOperation to
// every step of it: what it syncs, how, its hooks, and what its current
// attempt found. The status shows state; nothing else of it lives on the
// app's state, so a step reads the operation it is given.
type operation struct {
	state  *app.OperationState
	target contract.Target
	params syncParams
	// hooks are the operation's hooks; nil without hooks (or a dry run).
	hooks *hookOp
	// skippedUnreachable: the attempt skipped unreachable regions.
	skippedUnreachable bool
	// awaitingPrune are the objects marked Prune=confirm whose prune the
	// regions hold back in this attempt.
	awaitingPrune []app.ResourceKey
	// unreachable: the attempt failed, or skipped regions, only because
	// they were unreachable.
	unreachable bool
	// cancel cancels what the operation runs (terminate); terminated says
	// why it was terminated, empty while it was not.
	cancel     workflow.CancelFunc
	terminated string
	// request is what the operation was asked to sync, for a retry that
	// renders an updated spec (retarget); specDigest the spec its target
	// was rendered for.
	request    opRequest
	specDigest string
	// retry is the operation's retry policy, fixed when it began.
	retry *app.RetryPolicy
	// continued: the operation goes on in the next run of the workflow
	// (continue-as-new between retries, operation_carry.go).
	continued bool
}

// opRequest is what began an operation: an automated sync, or a sync
// update with its revision (empty: the spec's) or a rollback's entry.
type opRequest struct {
	auto     bool
	revision string
	rollback bool
	// info and initiatedBy are the request's, kept on the operation
	// (operationOf).
	info        []app.Info
	initiatedBy *app.InitiatedBy
}

// operationOf is what the operation keeps of its request, as Argo CD's
// operationState.operation: its info and who asked; nil without either.
// It changes no command, so it needs no version.
func operationOf(info []app.Info, by *app.InitiatedBy) *app.Operation {
	if len(info) == 0 && by == nil {
		return nil
	}
	op := &app.Operation{Info: info}
	if by != nil {
		op.InitiatedBy = new(*by)
	}
	return op
}

func (op *operation) id() string { return op.state.ID }

// beginAttempt resets what an attempt finds, and numbers its hooks.
func (op *operation) beginAttempt(attempt int64) {
	op.skippedUnreachable, op.awaitingPrune = false, nil
	if op.hooks != nil {
		op.hooks.attempt = attempt
	}
}

// runOperation syncs target to every region in parallel, retrying the whole
// operation per syncPolicy.retry, and records the outcome.
func (s *appState) runOperation(ctx workflow.Context, target contract.Target, p syncParams, req opRequest) *operation {
	s.OperationSeq++
	op := &operation{target: target, params: p, request: req, specDigest: s.app.SpecDigest(), retry: s.retryPolicy(p), state: &app.OperationState{
		ID: s.operationID(), Revision: target.Commit(), Phase: app.OperationRunning,
		Message: "syncing regions " + strings.Join(s.regionNames(), ", "), StartedAt: workflow.Now(ctx),
		Operation: operationOf(req.info, req.initiatedBy), Local: target.Local,
	}}
	s.Status.OperationState = op.state
	s.publish(ctx)
	op.hooks = s.beginHooks(ctx, p)
	s.runAttempts(ctx, op, 0)
	return op
}

// runAttempts runs the operation's attempts from the first given (a
// resumed operation's next retry) and records how it ended, unless it
// goes on in the next run (op.continued).
func (s *appState) runAttempts(ctx workflow.Context, op *operation, first int64) {
	// The handlers reach the running operation here (terminate-op,
	// confirm); the operation's steps are handed op.
	s.running = op
	octx, cancel := workflow.WithCancel(ctx)
	op.cancel = cancel
	s.attempts(octx, op, first)
	s.running = nil
	if op.continued {
		s.continuing = op
		return
	}
	s.endOperation(ctx, op)
}

// attempts runs the operation's attempts until one succeeds, fails for
// good, or its retries are spent, or the operation continues as new
// between two of them. A first attempt after 0 follows a retry's wait.
func (s *appState) attempts(ctx workflow.Context, op *operation, first int64) {
	st, retry := op.state, op.retry
	retried := first > 0
	for attempt := first; ; attempt++ {
		if retried && argoRetryMessages(ctx) {
			st.Message = retryingMessage(st.RetryCount)
		}
		// A retry syncs the app's spec as it is now.
		err := s.retargetForRetry(ctx, op, retried)
		op.beginAttempt(attempt)
		var results []app.ResourceResult
		if err == nil {
			results, err = s.syncStages(ctx, op)
		}
		retried = false
		var se *syncError
		op.unreachable = op.skippedUnreachable || (errors.As(err, &se) && se.unreachable)
		st.Results = results
		if op.terminated != "" {
			op.endTerminated()
			return
		}
		if err == nil {
			var again bool
			if again, err = s.awaitPruneConfirmation(ctx, op); again {
				attempt-- // the same attempt, now confirmed
				continue
			}
			if op.terminated != "" {
				op.endTerminated()
				return
			}
		}
		if err == nil {
			st.Phase = app.OperationSucceeded
			if !op.skippedUnreachable {
				st.Message = "successfully synced (all tasks run)"
			}
			return
		}
		st.Phase, st.Message = app.OperationFailed, err.Error()
		if isPermanent(err) || !retry.ShouldRetry(attempt) {
			if argoRetryMessages(ctx) {
				st.Message = retriedMessage(st.Message, st.RetryCount)
			}
			return
		}
		st.RetryCount = attempt + 1
		st.Phase = app.OperationRunning
		delay := retry.Delay(attempt)
		if argoRetryMessages(ctx) {
			st.Message = retryAtMessage(err.Error(), st.RetryCount, workflow.Now(ctx).Add(delay))
		} else {
			st.Message = fmt.Sprintf("retrying (attempt %d) after: %s", attempt+1, err)
		}
		s.publish(ctx)
		again, err := s.waitToRetry(ctx, op, delay)
		switch {
		case op.terminated != "":
			op.endTerminated()
			return
		case err != nil:
			st.Phase, st.Message = app.OperationError, err.Error()
			return
		case !again:
			return
		}
		if s.continueBetweenRetries(ctx, op) {
			return
		}
		if op.terminated != "" {
			op.endTerminated()
			return
		}
		retried = true
	}
}

// endOperation records how the operation ended: its PostSync hooks, the
// metrics, the history entry.
func (s *appState) endOperation(ctx workflow.Context, op *operation) {
	st := op.state
	finished := workflow.Now(ctx)
	st.FinishedAt = &finished
	if st.Phase == app.OperationSucceeded && op.hooks != nil {
		s.startPostSync(ctx, op.target, st)
	}
	s.appMetrics(ctx).WithTags(map[string]string{"phase": string(st.Phase)}).Counter("ferry_app_sync_total").Inc(1)
	s.appMetrics(ctx).Timer("ferry_app_sync_duration_seconds").Record(finished.Sub(st.StartedAt))
	// A selective sync writes no history entry, as in Argo CD.
	if st.Phase == app.OperationSucceeded && !op.params.dryRun && !op.params.selective() {
		s.clearCondition(conditionSyncError)
		s.Status.AddHistory(historyEntry(op.target, finished), s.app.HistoryLimit())
	}
	s.publish(ctx)
}

// runDelete deletes the app: with cascade, its resources in every region
// first. It reports whether the app is gone; when a region failed, the app
// stays, so that nothing is left half-deleted without an owner.
func (s *appState) runDelete(ctx workflow.Context) bool {
	p := s.deletion
	defer func() { p.done = true }()
	s.notifyDeleting(ctx)
	if !p.req.Cascades(&s.app) {
		return true
	}
	dests := s.deleteTargets(ctx)
	var failed []string
	for {
		futures := make([]workflow.Future, len(dests))
		for i, d := range dests {
			futures[i] = workflow.ExecuteActivity(syncCtx(ctx, d.Region, deleteResourcesSummary(d.Region)), contract.ActivityDeleteResources,
				contract.DeleteInput{App: s.app.Metadata.Name, Region: d.Region, Propagation: p.req.PropagationPolicy(&s.app), Confirmed: p.confirmed,
					Namespace: d.Namespace, Project: s.app.ProjectOf()})
		}
		// awaiting: objects marked Delete=confirm held their region's delete.
		var awaiting []app.ResourceKey
		for i, d := range dests {
			var out contract.DeleteResult
			if err := futures[i].Get(ctx, &out); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %s", d.Region, rootMessage(ctx, err)))
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
			failed = append(failed, "child apps: "+rootMessage(ctx, err))
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
	return fmt.Sprintf("%d", s.OperationSeq)
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

// isUnreachable reports whether a region's activity failed because the
// region could not be reached: no worker took it in time, a worker died
// without another taking over, or the API server did not answer.
func isUnreachable(err error) bool {
	var timeout *temporal.TimeoutError
	var appErr *temporal.ApplicationError
	var unanswered *unansweredError
	return errors.As(err, &timeout) || (errors.As(err, &appErr) && appErr.Type() == contract.ErrUnreachable) || errors.As(err, &unanswered)
}
