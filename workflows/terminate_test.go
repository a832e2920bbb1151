package workflows

import (
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// retryingForEver is an automated app whose sync fails in every region
// and retries for ever (retry.limit -1).
func (s *appSuite) retryingForEver() Input {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	degraded := temporal.NewNonRetryableApplicationError("wave 0 is not healthy: Pod/gb/fails: Degraded", contract.ErrSyncFailed, nil)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(contract.SyncResult{}, degraded)
	in := testApp(true)
	in.Spec.SyncPolicy.Retry = &app.RetryPolicy{Limit: -1, Backoff: &app.Backoff{Duration: "20s", MaxDuration: "20s"}}
	return in
}

// TestTerminateOpStopsARetryingOperation: terminate-op ends an operation
// that retries for ever while it waits for its next retry; it is Failed
// with Argo CD's "Operation terminated", not retried again, and the app
// goes on (a refresh compares).
func (s *appSuite) TestTerminateOpStopsARetryingOperation() {
	in := s.retryingForEver()
	var ended *app.OperationState
	s.env.RegisterDelayedCallback(func() {
		s.Equal(app.OperationRunning, s.query().Status.OperationState.Phase)
		s.env.UpdateWorkflow(contract.UpdateTerminateOp, "terminate", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("terminate-op rejected", err) },
			OnAccept: func() {},
			OnComplete: func(out any, err error) {
				s.NoError(err)
				ended, _ = out.(*app.OperationState)
			},
		}, contract.TerminateOpRequest{})
	}, 50*time.Second)
	s.env.RegisterDelayedCallback(func() {
		op := s.query().Status.OperationState
		s.Require().NotNil(op)
		s.Equal(app.OperationFailed, op.Phase)
		s.Equal("Operation terminated by ferry app terminate-op", op.Message)
		retries := op.RetryCount
		s.Require().NotNil(ended, "the update answers with the ended operation")
		s.Equal(op.ID, ended.ID)
		s.env.UpdateWorkflow(contract.UpdateTerminateOp, "again", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Contains(err.Error(), "no operation is in progress") },
			OnAccept:   func() { s.Fail("nothing runs: a second terminate-op is refused") },
			OnComplete: func(any, error) {},
		}, contract.TerminateOpRequest{})
		s.env.RegisterDelayedCallback(func() {
			s.Equal(retries, s.query().Status.OperationState.RetryCount, "no retry after the termination")
		}, 2*time.Minute)
	}, 55*time.Second)
	s.deleteAt(5*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}

// TestDeleteIsNotHeldBackByARetryingOperation: a delete sent while the
// operation waits for its next retry ends the operation, and the app is
// deleted.
func (s *appSuite) TestDeleteIsNotHeldBackByARetryingOperation() {
	in := s.retryingForEver()
	deleted := false
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateDelete, "delete", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Fail("delete rejected", err) },
			OnAccept:   func() {},
			OnComplete: func(_ any, err error) { s.NoError(err); deleted = true },
		}, contract.DeleteRequest{Cascade: ptr(false)})
	}, 50*time.Second)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
	s.True(deleted, "the delete completed")
}
