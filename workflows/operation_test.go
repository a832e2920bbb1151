package workflows

import (
	"context"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestAFailedSyncKeepsItsResultsAndTheRegionsState: a region sync that
// fails for good reports its failure inside its result; the operation is
// Failed with every resource's result, and the status shows the region as
// it answered (OutOfSync, the failed object's state), not unreachable.
func (s *appSuite) TestAFailedSyncKeepsItsResultsAndTheRegionsState() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 2}, nil)
	ns := app.ResourceKey{Kind: "Namespace", Name: "gb"}
	sa := app.ResourceKey{Kind: "ServiceAccount", Namespace: "gb", Name: "Bad_Name"}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			return contract.CompareResult{Resources: []app.ResourceStatus{{ResourceKey: sa, Region: in.Region, Status: app.SyncStatusOutOfSync, Health: app.HealthMissing}}}, nil
		})
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			return contract.SyncResult{
				Results: []app.ResourceResult{{ResourceKey: ns, Region: in.Region, Action: "created"},
					{ResourceKey: sa, Region: in.Region, Action: "failed", Message: "apply: metadata.name: Invalid value"}},
				Resources: []app.ResourceStatus{{ResourceKey: sa, Region: in.Region, Status: app.SyncStatusOutOfSync, Health: app.HealthMissing,
					Message: "metadata.name: Invalid value"}},
				Failure: &contract.SyncFailure{Type: contract.ErrSyncFailed, Message: "ServiceAccount/gb/Bad_Name: apply: metadata.name: Invalid value"},
			}, nil
		}).Times(2)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		op := v.Status.OperationState
		s.Require().NotNil(op)
		s.Equal(app.OperationFailed, op.Phase)
		s.Contains(op.Message, "us-east-1: ServiceAccount/gb/Bad_Name: apply: metadata.name: Invalid value")
		s.Len(op.Results, 4, "both results of both regions: %+v", op.Results)
		s.Equal(app.SyncStatusOutOfSync, v.Status.Sync.Status)
		s.Equal(app.HealthMissing, v.Status.Health.Status)
		for _, c := range v.Status.Conditions {
			s.NotEqual(conditionRegionError, c.Type, "the regions answered: %+v", v.Status.Conditions)
		}
		for _, r := range []string{"us-east-1", "eu-west-1"} {
			s.Equal(app.SyncStatusOutOfSync, v.Status.Regions[r].Sync, r)
			s.False(v.Status.Regions[r].Unreachable, r)
		}
		s.Len(v.Status.Resources, 2)
	}, 5*time.Second)
	s.deleteAt(8*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}
