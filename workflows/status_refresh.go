package workflows

import (
	"github.com/ferry-gitops/ferry/contract"
	"go.temporal.io/sdk/workflow"
)

// registerStatusAndRefresh gives a long-running workflow (an app, a set)
// its status query, answered by view, and a coroutine that hands each
// refresh signal to onRefresh, in the order they arrive.
func registerStatusAndRefresh[V any](ctx workflow.Context, view func() (V, error), onRefresh func(contract.RefreshRequest)) error {
	if err := workflow.SetQueryHandler(ctx, contract.QueryStatus, view); err != nil {
		return err
	}
	refreshes := workflow.GetSignalChannel(ctx, contract.SignalRefresh)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var req contract.RefreshRequest
			refreshes.Receive(ctx, &req)
			onRefresh(req)
		}
	})
	return nil
}
