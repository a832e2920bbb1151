package workflows

import (
	"context"
	"strings"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestPreSyncInASilentRegionLeavesItOut: eu-west-1's API server stops
// answering while its PreSync hook runs, and its RunHooks ends Unreachable
// (not retried). The other region goes on to its sync; eu-west-1 is shown
// Unreachable with its reason, is not synced, and runs no SyncFail hooks;
// the operation fails naming it (versionPreSyncUnreachable). Every message
// a user reads is the activity's own, without the SDK's "(type: …,
// retryable: …)" suffix (versionPlainMessages).
func (s *hooksSuite) TestPreSyncInASilentRegionLeavesItOut() {
	const silent = "eu-west-1"
	const why = "Unreachable: region eu-west-1: its API server stopped answering during its PreSync hooks (context deadline exceeded); " +
		"what was applied before stays, and the region syncs again once it answers"
	s.renders(map[string]int{contract.HookPreSync: 1, contract.HookSyncFail: 1})
	s.env.OnActivity(contract.ActivityRunHooks, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RunHooksInput) (contract.RunHooksResult, error) {
			s.record("RunHooks " + in.Phase + " " + in.Region)
			if in.Region == silent && in.Phase == contract.HookPreSync {
				return contract.RunHooksResult{}, temporal.NewNonRetryableApplicationError(why, contract.ErrUnreachable, nil)
			}
			return contract.RunHooksResult{Hooks: []contract.HookResult{{ResourceKey: app.ResourceKey{Group: "batch", Kind: "Job", Name: strings.ToLower(in.Phase)},
				Region: in.Region, Phase: in.Phase, Status: "Succeeded", Message: "job completed"}}}, nil
		})
	s.sync(time.Second, func(op *app.OperationState) {
		s.Equal(app.OperationFailed, op.Phase, op.Message)
		s.Contains(op.Message, "sync failed in "+silent+": "+why)
		s.NotContains(op.Message, "(type:", "the SDK's suffix is not a user's to read")
		s.NotContains(op.Message, "nothing of the Sync phase was applied", "the other region synced")
		v := s.query()
		sum := v.Status.Regions[silent]
		s.True(sum.Unreachable, "%+v", sum)
		s.Equal(why, sum.Message)
		s.Equal(app.SyncStatusSynced, v.Status.Regions["us-east-1"].Sync)
		var conds []string
		for _, c := range v.Status.Conditions {
			conds = append(conds, c.Type+": "+c.Message)
		}
		s.Contains(conds, conditionRegionError+": "+silent+": "+why)
	})
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
	s.ElementsMatch([]string{"RunHooks PreSync us-east-1", "RunHooks PreSync eu-west-1", "Sync us-east-1", "RunHooks SyncFail us-east-1"},
		s.recorded(), "the silent region is neither synced nor asked for its SyncFail hooks")
}
