package workflows

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// TestRegionSilentMidSyncStaysUnreachable: of three regions, eu-west-1's
// API server stops answering during its sync: the Sync reports that
// inside its result (the region activity's silence check), and the
// region's compares fail Unreachable after it. The operation ends with
// the others' results, the others stay Synced, and eu-west-1 shows
// Unreachable with its reason through every later fold (before
// versionUnreachableStays, the operation's own fold and the others'
// compare answers summarised it from no rows: Synced and Healthy).
func (s *appSuite) TestRegionSilentMidSyncStaysUnreachable() {
	const silent = "eu-west-1"
	s.newEnv(Config{Regions: regions.Of("us-east-1", silent, "ap-south-1")})
	sha := "1111111111111111111111111111111111111111"
	s.env.SetTestTimeout(time.Minute)
	cluster := &fakeCluster{synced: map[string]string{}}
	var gone atomic.Bool
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: sha}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			if in.Region == silent && gone.Load() {
				time.Sleep(3 * time.Second) // the others answer first (wall time: the test takes about 10 s)
				return contract.CompareResult{}, temporal.NewApplicationError("Unreachable: region eu-west-1: its API server does not answer", contract.ErrUnreachable)
			}
			return cluster.compare(ctx, in)
		})
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			if in.Region == silent {
				gone.Store(true)
				return contract.SyncResult{Failure: &contract.SyncFailure{Type: contract.ErrUnreachable,
					Message: "Unreachable: region eu-west-1: its API server stopped answering during the sync"}}, nil
			}
			return cluster.sync(ctx, in)
		})
	unreachable := func(when string) {
		v := s.query()
		sum := v.Status.Regions[silent]
		s.True(sum.Unreachable, "%s: %+v", when, sum)
		s.Equal(app.SyncStatusUnknown, sum.Sync, when)
		s.Contains(sum.Message, "Unreachable", when)
		s.Equal(app.HealthUnknown, v.Status.Health.Status, when)
	}
	// The region worker's probes tell the app (a drift by unreachable),
	// whose compare answers in the others first.
	s.env.RegisterDelayedCallback(func() {
		unreachable("once the operation ended")
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{Drift: &contract.Drift{Region: silent, By: []string{"unreachable"}}})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() { unreachable("while its compare runs") }, 2*time.Second)
	s.env.RegisterDelayedCallback(func() {
		unreachable("once its compare failed")
		v := s.query()
		op := v.Status.OperationState
		s.Require().NotNil(op)
		s.Equal(app.OperationFailed, op.Phase)
		s.Contains(op.Message, silent+": Unreachable")
		s.Len(op.Results, 2, "the results of the regions that answered")
		for _, r := range []string{"us-east-1", "ap-south-1"} {
			s.Equal(app.SyncStatusSynced, v.Status.Regions[r].Sync, r)
			s.Equal(sha, v.Status.Regions[r].SyncedRevision, r)
		}
		s.Equal(app.SyncStatusUnknown, v.Status.Sync.Status, "a region is unreachable")
	}, 8*time.Second)
	s.deleteAt(9*time.Second, false)
	in := testApp(true)
	in.Spec.Destinations = append(in.Spec.Destinations, app.Destination{Name: "ap-south-1", Namespace: "gb"})
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
}
