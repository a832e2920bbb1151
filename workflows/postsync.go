package workflows

import (
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// PostSyncHooks is the workflow of an operation's PostSync hooks: it runs
// them in every region at once, tells the app how they went (the app may
// be gone, or on a later run: the signal goes to its workflow ID), and
// fails when a hook failed, so the Web UI shows it.
func (w *Workflows) PostSyncHooks(ctx workflow.Context, in contract.PostSyncInput) (contract.PostSyncResult, error) {
	ran, failed, _ := runHookPhase(ctx, in.Target, in.Destinations, in.OperationID, contract.HookPostSync, in.SyncOptions, "", "")
	out := contract.PostSyncResult{
		WorkflowID: workflow.GetInfo(ctx).WorkflowExecution.ID, Operation: in.Operation,
		Phase: app.OperationSucceeded, Results: hookResourceResults(ran),
		Message: fmt.Sprintf("%d PostSync hooks succeeded", len(ran)),
	}
	if len(failed) > 0 {
		out.Phase, out.Message = app.OperationFailed, "PostSync hooks failed: "+strings.Join(failed, "; ")
		if in.SyncFail {
			ranFail, failedToo, _ := runHookPhase(ctx, in.Target, in.Destinations, in.OperationID, contract.HookSyncFail, in.SyncOptions, "", "")
			out.Results = append(out.Results, hookResourceResults(ranFail)...)
			if len(failedToo) > 0 {
				out.Message += "; SyncFail hooks failed too: " + strings.Join(failedToo, "; ")
			} else {
				out.Message += fmt.Sprintf("; %d SyncFail hooks ran", len(ranFail))
			}
		}
	}
	err := workflow.SignalExternalWorkflow(ctx, in.Parent, "", contract.SignalPostSyncResult, out).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Info("the app did not hear the PostSync outcome (deleted?)", "app", in.Parent, "error", err)
	}
	if len(failed) > 0 {
		return out, temporal.NewNonRetryableApplicationError(out.Message, contract.ErrHookFailed, nil)
	}
	return out, nil
}

// startPostSync marks a succeeded operation's PostSync hooks pending and
// starts them at once if every region is Synced and Healthy; otherwise the
// reconciles that follow (every few seconds while resources settle) start
// them once so. The operation completes now either way.
func (s *appState) startPostSync(ctx workflow.Context, target contract.Target, op *app.OperationState) {
	if s.hookCount(contract.HookPostSync) == 0 {
		return
	}
	op.PostSync = &app.HookRun{Phase: app.OperationRunning, StartedAt: workflow.Now(ctx)}
	s.postSyncWhenSettled(ctx, target)
}

// postSyncWhenSettled starts the last operation's pending PostSync workflow
// when every region is Synced and Healthy at the operation's revision. It
// gives up when the app moved to another revision, or after settleWindow.
// It does not wait for the workflow, only for its start: the child
// outlives this run if need be (parent-close policy ABANDON).
func (s *appState) postSyncWhenSettled(ctx workflow.Context, target contract.Target) {
	op := s.Status.OperationState
	if op == nil || op.PostSync == nil || op.PostSync.Phase != app.OperationRunning || op.PostSync.WorkflowID != "" {
		return
	}
	run, now := op.PostSync, workflow.Now(ctx)
	var unsettled []string
	for _, d := range s.destinations() {
		if sum := s.Status.Regions[d.Region]; sum.Sync != app.SyncStatusSynced || sum.Health != app.HealthHealthy {
			unsettled = append(unsettled, fmt.Sprintf("%s is %s and %s", d.Region, sum.Sync, sum.Health))
		}
	}
	switch {
	case target.Commit() != op.Revision:
		run.Phase, run.FinishedAt = app.OperationFailed, &now
		run.Message = "PostSync hooks not run: the app moved on to " + short(target.Commit()) + " before every region was Synced and Healthy"
		return
	case len(unsettled) > 0 && now.Sub(run.StartedAt) > settleWindow:
		run.Phase, run.FinishedAt = app.OperationFailed, &now
		run.Message = fmt.Sprintf("PostSync hooks not run: not every region became Synced and Healthy within %s: %s", settleWindow, strings.Join(unsettled, "; "))
		return
	case len(unsettled) > 0:
		run.Message = "PostSync hooks wait for every region to be Synced and Healthy: " + strings.Join(unsettled, "; ")
		return
	}
	base := op.ID + "-" + chainTag(ctx)
	run.WorkflowID = contract.PostSyncWorkflowID(s.app.Metadata.Name, base)
	run.Message = "running PostSync hooks in workflow " + run.WorkflowID
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		StaticSummary:     postSyncSummary(s.app.Metadata.Name, op.ID, s.regionNames()),
		WorkflowID:        run.WorkflowID,
		TaskQueue:         contract.TaskQueue,
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	})
	child := workflow.ExecuteChildWorkflow(cctx, contract.PostSyncWorkflow, contract.PostSyncInput{
		Parent: workflow.GetInfo(ctx).WorkflowExecution.ID, Operation: op.ID, OperationID: base,
		Target: target, Destinations: s.destinations(), SyncOptions: s.hookSyncOptions(),
		SyncFail: s.hookCount(contract.HookSyncFail) > 0,
	})
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil && run.Phase == app.OperationRunning {
		now := workflow.Now(ctx)
		run.Phase, run.FinishedAt = app.OperationFailed, &now
		run.Message = "PostSync hooks not started: " + err.Error()
	}
	s.publish(ctx)
}

// versionPostSyncPublish publishes the status as soon as the PostSync
// outcome arrives (search attributes, notifications, the Application
// object): recorded runs waited for the next reconcile.
const versionPostSyncPublish = "postsync-outcome-published"

// receivePostSyncResults folds the PostSync outcome the child signals into
// the operation it belongs to; one for an older operation is dropped.
func (s *appState) receivePostSyncResults(ctx workflow.Context) {
	results := workflow.GetSignalChannel(ctx, contract.SignalPostSyncResult)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var res contract.PostSyncResult
			results.Receive(ctx, &res)
			op := s.Status.OperationState
			if op == nil || op.PostSync == nil || op.PostSync.WorkflowID != res.WorkflowID {
				workflow.GetLogger(ctx).Info("PostSync outcome of an earlier operation dropped", "workflowID", res.WorkflowID)
				continue
			}
			now := workflow.Now(ctx)
			op.PostSync.Phase, op.PostSync.Message, op.PostSync.Results = res.Phase, res.Message, res.Results
			op.PostSync.FinishedAt = &now
			if res.Phase == app.OperationFailed {
				// The PostSync phase is part of the operation, as in Argo CD:
				// a failed PostSync hook fails it.
				op.Phase, op.Message = app.OperationFailed, res.Message
			}
			if changeVersion(ctx, versionPostSyncPublish) == 1 {
				s.publish(ctx)
			}
		}
	})
}
