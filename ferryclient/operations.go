package ferryclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// Refresh asks the app to compare now (SignalRefresh); hard renders again
// even when the revision has not moved.
func Refresh(ctx context.Context, c client.Client, name string, hard bool) error {
	return c.SignalWorkflow(ctx, contract.WorkflowID(name), "", contract.SignalRefresh, contract.RefreshRequest{Hard: hard})
}

// ManualSyncAllowed refuses a manual sync (or rollback) of v's app that
// its project's sync windows deny now, with the windows' message, as
// argocd app sync is refused. rc names the regions (nil: any).
func ManualSyncAllowed(ctx context.Context, c client.Client, v *contract.View, rc *regions.Config) error {
	p, err := GetProject(ctx, c, v.ProjectOf())
	if err != nil {
		return fmt.Errorf("read the sync windows of project %s: %w", v.ProjectOf(), err)
	}
	if d := p.SyncAllowed(v.WindowSubject(rc), time.Now(), true); !d.Allowed {
		return errors.New(d.Message)
	}
	return nil
}
