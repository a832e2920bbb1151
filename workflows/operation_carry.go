package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// Version changes of a retrying operation, for GetVersion.
const (
	// changeRetryContinueAsNew: an operation continues as new between two
	// attempts.
	changeRetryContinueAsNew = "retry-continue-as-new"
	// changeRetrySpec: a retry renders the app's spec as a spec update
	// left it, not the spec the operation began with.
	changeRetrySpec = "retry-spec"
)

// carriedOperation is the running operation as the next run resumes it;
// its state (ID, phase, retry count, start, results) is the carried
// status' operationState.
type carriedOperation struct {
	Target contract.Target `json:"target"`
	// SpecDigest is the spec the target was rendered for.
	SpecDigest string `json:"specDigest"`
	// Retry is the operation's retry policy.
	Retry *app.RetryPolicy `json:"retry,omitempty"`
	// Hooks is the hooks' operation base (hookOp.base); empty: no hooks.
	Hooks string `json:"hooks,omitempty"`
	// Auto: an automated sync; else a sync update, with the revision it
	// asked for (empty: the spec's) or a rollback's.
	Auto     bool   `json:"auto,omitempty"`
	Revision string `json:"revision,omitempty"`
	Rollback bool   `json:"rollback,omitempty"`
	// The operation's parameters (syncParams).
	Prune          bool           `json:"prune,omitempty"`
	DryRun         bool           `json:"dryRun,omitempty"`
	PruneConfirmed bool           `json:"pruneConfirmed,omitempty"`
	Selection      *app.Selection `json:"selection,omitempty"`
	Options        []string       `json:"options,omitempty"`
}

func (op *operation) carried() *carriedOperation {
	c := &carriedOperation{
		Target: op.target, SpecDigest: op.specDigest, Retry: op.retry,
		Auto: op.request.auto, Revision: op.request.revision, Rollback: op.request.rollback,
		Prune: op.params.prune, DryRun: op.params.dryRun, PruneConfirmed: op.params.pruneConfirmed,
		Selection: op.params.selection, Options: op.params.options,
	}
	if op.hooks != nil {
		c.Hooks = op.hooks.base
	}
	return c
}

// continueBetweenRetries continues the app as new after a retry's wait
// when the history asks for it, and reports whether it does. It does not
// while a sync or a delete waits for the loop; a terminate-op or a delete
// that arrives meanwhile ends the operation here (op.terminated).
func (s *appState) continueBetweenRetries(ctx workflow.Context, op *operation) bool {
	s.retries++
	if s.retries < s.maxReconciles && !workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
		return false
	}
	if !s.idle() || changeVersion(ctx, changeRetryContinueAsNew) == workflow.DefaultVersion {
		return false
	}
	// The sync update that began the operation answers now, with the
	// operation still running: its caller follows it in the status.
	if p := s.syncing; p != nil && !p.done {
		st := *op.state
		p.result, p.done = &st, true
	}
	// ctx is the operation's: a terminate-op cancels it, ending the wait.
	_ = workflow.Await(ctx, func() bool {
		return workflow.AllHandlersFinished(ctx) || op.terminated != "" || !s.idle()
	})
	switch {
	case op.terminated != "":
		return false
	case s.deletion != nil:
		op.terminate("because the app is being deleted")
		return false
	case !s.idle():
		return false
	}
	op.continued = true
	return true
}

// continueAsNew ends the run, handing the next one the app's state and,
// when it continues between retries, the running operation.
func (s *appState) continueAsNew(ctx workflow.Context) error {
	s.awaitObjectPublished(ctx)
	next := s.nextRunCtx(ctx)
	s.takeLastSignals(ctx)
	return workflow.NewContinueAsNewError(next, contract.ApplicationWorkflow, s.nextInput())
}

// changeTakeLastSignals: a run about to continue as new first lets its
// signal receivers take what its last workflow task delivered, so that the
// next run carries it: a refresh (a push, `ferry app refresh`) that came
// with the task that ended the run was dropped, and the app saw its new
// commit only at its next poll.
const changeTakeLastSignals = "take-last-signals"

// takeLastSignals lets every other coroutine of the run take its turn
// before the run hands its state on. A signal that arrives while the main
// coroutine is blocked is handed to the coroutine that receives it
// (registerStatusAndRefresh, receivePostSyncResults), which applies it only
// when its turn comes in the workflow task, after the main coroutine's: so
// the main coroutine yields once, until a coroutine started now has run.
func (s *appState) takeLastSignals(ctx workflow.Context) {
	if changeVersion(ctx, changeTakeLastSignals) == workflow.DefaultVersion {
		return
	}
	turned := false
	workflow.Go(ctx, func(workflow.Context) { turned = true })
	_ = workflow.Await(ctx, func() bool { return turned })
}

// changeWaitBeforeContinuing: an idle run about to continue as new waits
// for what continueAsNew waits for (its object's status write, its word to
// the onboarding gate) before it checks that no handler runs and the app
// is still idle: a sync asked meanwhile (an update) is served by this run,
// where the continue-as-new cut it off and its caller got an error.
const changeWaitBeforeContinuing = "wait-before-continuing"

// readyToContinue tells whether an idle run may continue as new now: once
// its waits are over, no handler runs and the app is idle still; when not
// (a sync was asked), the loop goes on and asks again at its next turn.
func (s *appState) readyToContinue(ctx workflow.Context) (bool, error) {
	waits := changeVersion(ctx, changeWaitBeforeContinuing) != workflow.DefaultVersion
	if waits {
		s.awaitObjectPublished(ctx)
		s.awaitGateTold(ctx)
	}
	// A sync or delete asked meanwhile waits for the loop: the loop serves it
	// rather than wait for its handler to finish.
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) || waits && !s.idle() }); err != nil {
		return false, err
	}
	return s.idle() && !(waits && s.object.running), nil
}

// resumeOperation goes on with the operation the previous run carried,
// at its next attempt: its wait was waited there.
func (s *appState) resumeOperation(ctx workflow.Context, c *carriedOperation) {
	st := s.Status.OperationState
	if st == nil {
		return // not carried: nothing to resume
	}
	op := &operation{state: st, target: c.Target, specDigest: c.SpecDigest, retry: c.Retry,
		request: opRequest{auto: c.Auto, revision: c.Revision, rollback: c.Rollback},
		params: syncParams{prune: c.Prune, dryRun: c.DryRun, pruneConfirmed: c.PruneConfirmed,
			selection: c.Selection, options: c.Options}}
	if c.Hooks != "" {
		op.hooks = &hookOp{base: c.Hooks}
	}
	s.runAttempts(ctx, op, st.RetryCount)
	if !op.continued && op.request.auto {
		s.endAutoSync(op)
	}
}

// retargetForRetry renders the app's current spec for an attempt that
// follows a retry's wait when a spec update arrived since the operation's
// target was rendered: as in Argo CD, a retry syncs the app's spec as it
// is now (its source at the revision the sync asked for, else at the
// spec's targetRevision). A rollback keeps its history entry's source,
// and a local sync its tree.
func (s *appState) retargetForRetry(ctx workflow.Context, op *operation, retried bool) error {
	if !retried || op.request.rollback || op.target.Local != "" || op.specDigest == s.app.SpecDigest() {
		return nil
	}
	if changeVersion(ctx, changeRetrySpec) == workflow.DefaultVersion {
		return nil
	}
	revision := op.request.revision
	if revision == "" {
		revision = s.app.Spec.Source.Revision()
	}
	target, err := s.targetFrom(ctx, s.app.Spec.Source, nil, revision, true, false, false)
	if err != nil {
		return err
	}
	op.target, op.specDigest = target, s.app.SpecDigest()
	op.state.Revision = target.Commit()
	if op.request.auto && s.AutoSync != nil {
		s.AutoSync.Key = s.autoSyncKey(target)
	}
	if op.hooks == nil {
		op.hooks = s.beginHooks(ctx, op.params)
	}
	return nil
}
