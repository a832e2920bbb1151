package workflows

import (
	"context"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Apply creates the app's workflow, or sends a running one the new spec:
// one update-with-start, as `ferry app apply` and an app of apps do. The
// update's validator refuses a bad spec before anything changes.
func Apply(ctx context.Context, c client.Client, a *app.Application) (View, error) {
	summary, details := startSummary(a)
	start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		StaticSummary: summary, StaticDetails: details,
		ID:                       WorkflowID(a.Metadata.Name),
		TaskQueue:                TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, ApplicationWorkflow, a)
	handle, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName: UpdateSpec, Args: []any{a}, WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	var v View
	if err == nil {
		err = handle.Get(ctx, &v)
	}
	return v, err
}

// Delete deletes an app through its delete update: with its resources when
// cascade says so, or, when cascade is nil, when the app carries Argo CD's
// resources finalizer (DeleteRequest.Cascade).
func Delete(ctx context.Context, c client.Client, name string, cascade *bool) error {
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: WorkflowID(name), UpdateName: UpdateDelete,
		Args: []any{DeleteRequest{Cascade: cascade}}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, nil)
	}
	return err
}

// Query answers the status query of an app.
func Query(ctx context.Context, c client.Client, name string) (*View, error) {
	res, err := c.QueryWorkflow(ctx, WorkflowID(name), "", QueryStatus)
	if err != nil {
		return nil, err
	}
	var v View
	if err := res.Get(&v); err != nil {
		return nil, err
	}
	return &v, nil
}

// ListApps calls fn with the name and search attributes of every running
// app, a page of up to 1,000 at a time.
func ListApps(ctx context.Context, c client.Client, fn func(name string, s Summary)) error {
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:    "WorkflowType = '" + ApplicationWorkflow + "' AND ExecutionStatus = 'Running'",
			PageSize: 1000, NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list the running apps: %w", err)
		}
		for _, e := range resp.Executions {
			if name, ok := strings.CutPrefix(e.GetExecution().GetWorkflowId(), WorkflowID("")); ok {
				fn(name, SummaryOf(e.SearchAttributes))
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return nil
		}
	}
}
