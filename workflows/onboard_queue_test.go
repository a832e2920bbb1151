package workflows

import (
	"context"
	"errors"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// TestASyncAskedAsTheRunLeavesTheOnboardQueueIsServed: a new app that an
// Application object owns has synced on the onboarding queue and waits
// for its object's status write before it continues as new on ferry; a
// user's sync asked during that wait is served by this run and answered
// (it was cut off by the continue-as-new, its caller given an error), and
// the run then continues as new on ferry.
func (s *appSuite) TestASyncAskedAsTheRunLeavesTheOnboardQueueIsServed() {
	s.newEnv(Config{Regions: regions.Of("us-east-1")})
	s.env.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: contract.OnboardTaskQueue})
	s.env.RegisterActivityWithOptions(func(context.Context, contract.ObjectStatusInput) error { return nil },
		activity.RegisterOptions{Name: contract.ActivityPublishObjectStatus})
	s.env.OnActivity(contract.ActivityPublishObjectStatus, mock.Anything, mock.Anything).After(time.Minute).Return(nil)
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		contract.ResolveResult{SHA: "3333333333333333333333333333333333333333", Workers: map[string]string{"us-east-1": "w"}}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare).Maybe()
	syncs := 0
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			syncs++
			return cluster.sync(ctx, in)
		})
	answered := false
	s.env.RegisterDelayedCallback(func() {
		s.Equal(1, syncs, "the first sync is done; the run waits for its object's write")
		s.env.UpdateWorkflow(contract.UpdateSync, "users-sync", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("sync refused", err) },
			OnAccept: func() {},
			OnComplete: func(res any, err error) {
				s.NoError(err, "the sync is answered")
				if st, ok := res.(*app.OperationState); s.True(ok, "an operation state: %T", res) {
					s.Equal(app.OperationSucceeded, st.Phase)
				}
				answered = true
			},
		}, contract.SyncRequest{})
	}, 20*time.Second)
	in := testApp(true)
	in.Owner = &contract.Owner{Object: "argocd/guestbook"}
	in.Spec.Destinations = []app.Destination{{Name: "us-east-1", Namespace: "gb"}}
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.True(answered, "the user's sync was answered")
	s.Equal(2, syncs, "and made, in this run")
	var next *workflow.ContinueAsNewError
	s.Require().True(errors.As(s.env.GetWorkflowError(), &next), "the run continues as new: %v", s.env.GetWorkflowError())
	s.Equal(contract.TaskQueue, next.TaskQueueName, "on ferry")
}

// TestARefreshThatComesAsTheRunContinuesIsCarried: a new app has synced on
// the onboarding queue and waits for its word to the gate to be delivered
// before it continues as new on ferry; a refresh (`ferry app refresh`, a
// push) that comes in the workflow task of that delivery is carried to the
// next run, which reconciles it at once. It was dropped, and the app saw
// its new commit only at its next poll.
func (s *appSuite) TestARefreshThatComesAsTheRunContinuesIsCarried() {
	_, _, dones := s.onboardGated()
	s.env.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: contract.OnboardTaskQueue})
	s.env.RegisterDelayedCallback(func() { s.env.SignalWorkflow(contract.SignalOnboardGo, nil) }, time.Minute)
	// Sent before the gate's delivery is answered, without a workflow task
	// of its own: both come in the same task, as a refresh that arrives
	// while the delivery's event is written.
	s.gateTold = func() { s.env.SignalWorkflowSkippingWorkflowTask(contract.SignalRefresh, contract.RefreshRequest{}) }
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.Equal(int32(1), dones.Load(), "the gate was told")
	next := s.carriedInput()
	s.NotNil(next.Carried.Refresh, "the refresh is carried to the next run")
}
