package workflows

import (
	"context"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

func rolloutApp() Input {
	in := testApp(true)
	in.Spec.SyncPolicy.Rollout = &app.Rollout{Stages: []app.RolloutStage{
		{Regions: []string{"us-east-1"}, Soak: "30s"},
		{Regions: []string{"eu-west-1"}},
	}}
	return in
}

// TestRolloutGoesStageByStage: the second stage starts only after the first
// is Synced and Healthy and has soaked.
func (s *appSuite) TestRolloutGoesStageByStage() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	var order []string
	var syncedAt []time.Time
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			order = append(order, in.Region)
			syncedAt = append(syncedAt, s.env.Now())
			return cluster.sync(ctx, in)
		})
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal([]string{"us-east-1", "eu-west-1"}, order)
		s.Require().Len(syncedAt, 2)
		s.GreaterOrEqual(syncedAt[1].Sub(syncedAt[0]), 30*time.Second, "soaked before the next stage")
		s.Require().NotNil(v.Status.Rollout)
		s.Equal(app.RolloutCompleted, v.Status.Rollout.Phase)
		s.Equal(app.OperationSucceeded, v.Status.OperationState.Phase)
	}, 2*time.Minute)
	s.deleteAt(3*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, rolloutApp())
	s.NoError(s.env.GetWorkflowError())
}

// TestRolloutHaltsOnAnUnhealthyStage: a Degraded first stage halts the
// rollout; the second stage is never synced.
func (s *appSuite) TestRolloutHaltsOnAnUnhealthyStage() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	var order []string
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			order = append(order, in.Region)
			out, err := cluster.sync(ctx, in)
			out.Resources[0].Health = app.HealthDegraded
			return out, err
		})
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal([]string{"us-east-1"}, order, "stage 2 untouched")
		s.Require().NotNil(v.Status.Rollout)
		s.Equal(app.RolloutHalted, v.Status.Rollout.Phase)
		s.Equal(1, v.Status.Rollout.Stage)
		s.Contains(v.Status.Rollout.Message, "us-east-1 is Synced and Degraded")
		s.Equal(app.OperationFailed, v.Status.OperationState.Phase)
	}, time.Minute)
	s.deleteAt(2*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, rolloutApp())
	s.NoError(s.env.GetWorkflowError())
}

// TestHaltedRolloutShowsWhatEachRegionRuns: a new commit halts at a
// Degraded first stage; the second stage, compared with the new commit, is
// OutOfSync and still runs the previous one, which its SyncedRevision says.
func (s *appSuite) TestHaltedRolloutShowsWhatEachRegionRuns() {
	first, second := "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	sha := first
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
			return contract.ResolveResult{SHA: sha}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			return contract.RenderResult{Digest: "d-" + in.SHA[:4], Count: 1}, nil
		})
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			out, err := cluster.sync(ctx, in)
			if in.Target.SHA == second {
				out.Resources[0].Health = app.HealthDegraded
			}
			return out, err
		})
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Require().NotNil(v.Status.Rollout)
		s.Equal(app.RolloutCompleted, v.Status.Rollout.Phase)
		for _, r := range []string{"us-east-1", "eu-west-1"} {
			s.Equal(first, v.Status.Regions[r].SyncedRevision, r)
		}
		sha = second
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, 2*time.Minute)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Require().NotNil(v.Status.Rollout)
		s.Equal(app.RolloutHalted, v.Status.Rollout.Phase)
		us, eu := v.Status.Regions["us-east-1"], v.Status.Regions["eu-west-1"]
		s.Equal(second, us.Revision)
		s.Equal(second, us.SyncedRevision, "stage 1 runs the new commit, Degraded")
		s.Equal(second, eu.Revision, "compared with the new commit")
		s.Equal(app.SyncStatusOutOfSync, eu.Sync)
		s.Equal(first, eu.SyncedRevision, "stage 2 still runs the previous commit")
	}, 4*time.Minute)
	s.deleteAt(5*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, rolloutApp())
	s.NoError(s.env.GetWorkflowError())
}
