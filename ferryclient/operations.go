package ferryclient

import (
	"context"

	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// Sync starts a sync operation of the app (UpdateSync, a rollback too
// with req.RollbackID) and returns the operation as it began.
func Sync(ctx context.Context, c client.Client, name string, req contract.SyncRequest) (*app.OperationState, error) {
	var out app.OperationState
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: contract.WorkflowID(name), UpdateName: contract.UpdateSync,
		Args: []any{req}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, &out)
	}
	return &out, err
}

// Refresh asks the app to compare now (SignalRefresh); hard renders again
// even when the revision has not moved.
func Refresh(ctx context.Context, c client.Client, name string, hard bool) error {
	return c.SignalWorkflow(ctx, contract.WorkflowID(name), "", contract.SignalRefresh, contract.RefreshRequest{Hard: hard})
}
