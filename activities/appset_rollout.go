package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// observe copies into a set's row of an app what the set watches: its
// sync and health, and for a RollingSync its revision and last operation.
func observe(row *contract.AppSetApp, v *contract.View) {
	st := &v.Status
	row.Sync, row.Health = st.Sync.Status, st.Health.Status
	row.Revision, row.ReconciledAt = st.Sync.Revision, st.ReconciledAt
	if op := st.OperationState; op != nil {
		row.OpStartedAt, row.OpPhase, row.OpMessage = &op.StartedAt, op.Phase, op.Message
	}
}

// rollingSync is who starts the syncs of a progressive sync, as Argo CD's
// ApplicationSet controller records them.
var rollingSync = app.InitiatedBy{Username: "applicationset-controller", Automated: true}

// SyncAppSetApps starts the sync of each app a RollingSync step made
// Pending, as Argo CD's controller sets an Application's operation: once.
// An app whose sync is running, or began after it became Pending, is left
// alone, so a retry after a crash starts nothing twice. It returns once
// each app accepted its sync; the set follows them by their status.
func (a *AppSets) SyncAppSetApps(ctx context.Context, in contract.SyncAppSetAppsInput) (contract.SyncAppSetAppsResult, error) {
	defer heartbeatEvery(ctx, heartbeatInterval, "sync")()
	var out contract.SyncAppSetAppsResult
	refuse := func(name, msg string) {
		out.Refused = append(out.Refused, contract.AppSetApp{Name: name, Message: msg})
	}
	for _, s := range in.Apps {
		v, err := runningApp(ctx, a.Client, s.Name)
		switch {
		case isNotFound(err):
			refuse(s.Name, fmt.Sprintf("app %q is not running", s.Name))
			continue
		case err != nil:
			return out, fmt.Errorf("applicationset %q: query app %q: %w", in.Set, s.Name, err)
		case v.Owner == nil || v.Owner.AppSet != in.Set:
			refuse(s.Name, fmt.Sprintf("app %q is not applicationset %q's", s.Name, in.Set))
			continue
		}
		if op := v.Status.OperationState; op != nil && (op.Phase == app.OperationRunning || op.StartedAt.After(s.Since)) {
			continue
		}
		_, err = ferryclient.Sync(ctx, a.Client, s.Name, contract.SyncRequest{Prune: s.Prune, InitiatedBy: new(rollingSync)},
			client.WorkflowUpdateStageAccepted)
		var refused *temporal.ApplicationError
		switch {
		case err == nil: // accepted: the app runs the sync
			continue
		case errors.As(err, &refused), isNotFound(err): // its validator said no
			refuse(s.Name, contract.ErrorMessage(err))
			continue
		}
		return out, fmt.Errorf("applicationset %q: sync app %q: %w", in.Set, s.Name, err)
	}
	return out, nil
}
