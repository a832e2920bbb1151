package ferryclient

import (
	"context"

	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
)

// Refresh asks the app to compare now (SignalRefresh); hard renders again
// even when the revision has not moved.
func Refresh(ctx context.Context, c client.Client, name string, hard bool) error {
	return c.SignalWorkflow(ctx, contract.WorkflowID(name), "", contract.SignalRefresh, contract.RefreshRequest{Hard: hard})
}
