package ferryclient

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ferry-gitops/ferry/contract"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// objectWorkflow names the workflow of one object.
type objectWorkflow struct {
	// Type is the workflow type; IDPrefix what its IDs begin with.
	Type, IDPrefix string
	// Noun names the objects in errors ("applicationsets").
	Noun string
}

// applyWithStart creates the object's workflow with input, or sends a
// running one the update, in one update-with-start, and decodes the
// update's answer into out. When no worker polls the task queue it
// returns a *NoWorkerError instead of waiting for one without end.
func (w objectWorkflow) applyWithStart(ctx context.Context, c client.Client, name, summary string, memo map[string]any,
	input any, update string, args []any, out any) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go cancelWithoutWorkers(ctx, c, cancel, contract.TaskQueue)
	start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		StaticSummary:            summary,
		ID:                       w.IDPrefix + name,
		TaskQueue:                contract.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		Memo:                     memo,
	}, w.Type, input)
	handle, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName: update, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	if err == nil {
		err = handle.Get(ctx, out)
	}
	if noWorker := (*contract.NoWorkerError)(nil); err != nil && errors.As(context.Cause(ctx), &noWorker) {
		return noWorker
	}
	return err
}

// errNotRunning: no running workflow of the object answers.
var errNotRunning = errors.New("not running")

// query asks the object's running workflow; a completed one (a deleted
// object) would still answer from its history, so only a running one may.
// It returns errNotRunning when none runs.
func (w objectWorkflow) query(ctx context.Context, c client.Client, name, queryType string, out any) error {
	res, err := queryOpen(ctx, c, w.IDPrefix+name, queryType)
	switch {
	case err != nil && isNotFound(err), err == nil && res.QueryRejected != nil:
		return errNotRunning
	case err != nil:
		return err
	}
	return res.QueryResult.Get(out)
}

// listRunning calls fn with the name and execution of every running
// workflow of the kind, a page of up to 1,000 at a time.
func (w objectWorkflow) listRunning(ctx context.Context, c client.Client, fn func(name string, e *workflowpb.WorkflowExecutionInfo)) error {
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:    "WorkflowType = '" + w.Type + "' AND ExecutionStatus = 'Running'",
			PageSize: 1000, NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list the %s: %w", w.Noun, err)
		}
		for _, e := range resp.Executions {
			if name, ok := strings.CutPrefix(e.GetExecution().GetWorkflowId(), w.IDPrefix); ok {
				fn(name, e)
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return nil
		}
	}
}

// update sends the object's workflow an update and waits for its answer;
// errNotRunning when none runs.
func (w objectWorkflow) update(ctx context.Context, c client.Client, name, update string, args ...any) error {
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: w.IDPrefix + name, UpdateName: update, Args: args, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, nil)
	}
	if err != nil && isNotFound(err) {
		return errNotRunning
	}
	return err
}
