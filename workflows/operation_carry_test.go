package workflows

import (
	"context"
	"errors"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// carriedInput is the input a run that continued as new hands the next.
func (s *appSuite) carriedInput() Input {
	var can *workflow.ContinueAsNewError
	s.Require().True(errors.As(s.env.GetWorkflowError(), &can), "got %v", s.env.GetWorkflowError())
	var next Input
	s.Require().NoError(converterFor().FromPayloads(can.Input, &next))
	s.Require().NotNil(next.Carried)
	return next
}

// TestARetryingOperationContinuesAsNewAndResumes: a sync update whose
// operation retries for ever continues as new between two retries once
// the run has retried as often as it may reconcile; the update answers
// with the operation still Running. The next run resumes the operation
// at its next attempt (same ID, retry count and start going on) and
// terminate-op stops it there.
func (s *appSuite) TestARetryingOperationContinuesAsNewAndResumes() {
	cfg := Config{Regions: regions.Of("us-east-1", "eu-west-1"), MaxReconciles: 2}
	s.newEnv(cfg)
	in := s.retryingForEver()
	in.Spec.SyncPolicy.Automated = nil
	var answered *app.OperationState
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateSync, "sync", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Fail("sync rejected", err) },
			OnAccept:   func() {},
			OnComplete: func(out any, err error) { s.NoError(err); answered, _ = out.(*app.OperationState) },
		}, contract.SyncRequest{Prune: true})
	}, time.Second)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	next := s.carriedInput()
	s.Require().NotNil(answered, "the sync update answered before the run ended")
	s.Equal(app.OperationRunning, answered.Phase)
	op := next.Carried.Status.OperationState
	s.Require().NotNil(op)
	s.Require().NotNil(next.Carried.Operation, "the operation is carried")
	s.Equal(answered.ID, op.ID)
	s.Equal(app.OperationRunning, op.Phase)
	s.Equal(int64(2), op.RetryCount, "two retries in a run of at most two")
	s.True(next.Carried.Operation.Prune, "the request's parameters are carried")
	started := op.StartedAt

	// The next run: the operation resumes at its third attempt.
	s.newEnv(Config{Regions: cfg.Regions})
	s.failingSync()
	var ended *app.OperationState
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(op.ID, v.Status.OperationState.ID)
		s.Equal(app.OperationRunning, v.Status.OperationState.Phase)
		s.Equal(int64(3), v.Status.OperationState.RetryCount, "the resumed attempt failed and retries again")
		s.env.UpdateWorkflow(contract.UpdateTerminateOp, "terminate", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Fail("terminate-op rejected", err) },
			OnAccept:   func() {},
			OnComplete: func(out any, err error) { s.NoError(err); ended, _ = out.(*app.OperationState) },
		}, contract.TerminateOpRequest{})
	}, 10*time.Second)
	s.deleteAt(time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, next)
	s.NoError(s.env.GetWorkflowError())
	s.Require().NotNil(ended)
	s.Equal(op.ID, ended.ID)
	s.Equal(app.OperationFailed, ended.Phase)
	s.Equal("Operation terminated by ferry app terminate-op", ended.Message)
	s.True(started.Equal(ended.StartedAt), "the operation keeps its start")
}

// failingSync: the sync fails in every region (the carried render is not
// rendered again).
func (s *appSuite) failingSync() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	degraded := temporal.NewNonRetryableApplicationError("wave 0 is not healthy: Pod/gb/fails: Degraded", contract.ErrSyncFailed, nil)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(contract.SyncResult{}, degraded)
}

// TestAnAutomatedSyncContinuesAsNewAndEnds: a resumed automated sync that
// succeeds records its end as one begun in the run: Succeeded, a history
// entry, no SyncError condition.
func (s *appSuite) TestAnAutomatedSyncContinuesAsNewAndEnds() {
	cfg := Config{Regions: regions.Of("us-east-1", "eu-west-1"), MaxReconciles: 1}
	s.newEnv(cfg)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, s.retryingForEver())
	next := s.carriedInput()
	s.Require().NotNil(next.Carried.Operation)
	s.True(next.Carried.Operation.Auto)
	s.Equal(int64(1), next.Carried.Status.OperationState.RetryCount)

	s.newEnv(Config{Regions: cfg.Regions})
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(app.OperationSucceeded, v.Status.OperationState.Phase)
		s.Equal(int64(1), v.Status.OperationState.RetryCount)
		s.Len(v.Status.History, 1)
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
	}, 5*time.Second)
	s.deleteAt(10*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, next)
	s.NoError(s.env.GetWorkflowError())
}

// TestASpecUpdateTakesEffectAtTheNextRetry: a sync that fails on the
// app's path retries; a spec update with a fixed path arrives during the
// wait, and the next attempt renders and syncs the new path: the same
// operation succeeds.
func (s *appSuite) TestASpecUpdateTakesEffectAtTheNextRetry() {
	in := testApp(false)
	in.Spec.Source.Path = "broken"
	in.Spec.SyncPolicy = &app.SyncPolicy{Retry: &app.RetryPolicy{Limit: -1, Backoff: &app.Backoff{Duration: "20s", MaxDuration: "20s"}}}
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	var rendered []string
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
		rendered = append(rendered, in.Source.Path)
		return contract.RenderResult{Digest: in.Source.Path, Count: 1}, nil
	})
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
		if in.Target.Digest == "broken" {
			return contract.SyncResult{}, temporal.NewNonRetryableApplicationError("wave 0 is not healthy: Pod/gb/fails: Degraded", contract.ErrSyncFailed, nil)
		}
		return cluster.sync(ctx, in)
	})
	var synced *app.OperationState
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateSync, "sync", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Fail("sync rejected", err) },
			OnAccept:   func() {},
			OnComplete: func(out any, err error) { s.NoError(err); synced, _ = out.(*app.OperationState) },
		}, contract.SyncRequest{})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(int64(1), s.query().Status.OperationState.RetryCount, "the operation waits to retry")
		fixed := in.Application
		fixed.Spec.Source.Path = "fixed"
		s.env.UpdateWorkflow(contract.UpdateSpec, "spec", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Fail("spec rejected", err) },
			OnAccept:   func() {},
			OnComplete: func(_ any, err error) { s.NoError(err) },
		}, fixed)
	}, 10*time.Second)
	s.deleteAt(2*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
	s.Require().NotNil(synced)
	s.Equal(app.OperationSucceeded, synced.Phase, synced.Message)
	s.Equal(int64(1), synced.RetryCount, "the first retry synced the new spec")
	s.Equal([]string{"broken", "fixed"}, rendered[:2], "the retry rendered the updated spec")
}
