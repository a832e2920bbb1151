package workflows

import (
	"context"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestASyncRefusedBeforeApplyingIsNoOutage: a region sync that fails for
// a reason of its own before it applies anything (here the project refuses
// an object; a selection that names nothing fails the same way) fails the
// operation with why, and the regions show what their compare showed:
// OutOfSync and Missing, not Unknown, and no RegionUnreachable condition
// (versionFailedSyncAnswered).
func (s *appSuite) TestASyncRefusedBeforeApplyingIsNoOutage() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cm := app.ResourceKey{Kind: "ConfigMap", Namespace: "gb", Name: "settings"}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			return contract.CompareResult{Resources: []app.ResourceStatus{{ResourceKey: cm, Region: in.Region, Status: app.SyncStatusOutOfSync, Health: app.HealthMissing}}}, nil
		})
	const why = `project "default" does not allow Namespace gb: cluster-scoped kind Namespace is not allowed (clusterResourceWhitelist)`
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			return contract.SyncResult{}, temporal.NewNonRetryableApplicationError(why+" in region "+in.Region, contract.ErrProjectDenied, nil)
		}).Times(2)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		op := v.Status.OperationState
		s.Require().NotNil(op)
		s.Equal(app.OperationFailed, op.Phase)
		s.Contains(op.Message, "us-east-1: "+why)
		s.Equal(app.SyncStatusOutOfSync, v.Status.Sync.Status)
		s.Equal(app.HealthMissing, v.Status.Health.Status)
		for _, c := range v.Status.Conditions {
			s.NotEqual(conditionRegionError, c.Type, "the regions answered: %+v", v.Status.Conditions)
		}
		for _, r := range []string{"us-east-1", "eu-west-1"} {
			sum := v.Status.Regions[r]
			s.Equal(app.SyncStatusOutOfSync, sum.Sync, r)
			s.Equal(app.HealthMissing, sum.Health, r)
			s.False(sum.Unreachable, r)
		}
		s.Len(v.Status.Resources, 2, "each region's rows stay")
	}, 5*time.Second)
	s.deleteAt(8*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}
