package workflows

import (
	"context"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestSyncMarksOnlyTheRequestedRevision: the resolve of a revision a sync
// request names carries the app and its project, for the resolving
// activity's rule; the resolves of the spec's revision (a poll, a sync
// without --revision, a sync naming the spec's own revision) carry none.
// A refusal fails the operation with the activity's message.
func (s *appSuite) TestSyncMarksOnlyTheRequestedRevision() {
	var mu sync.Mutex
	requested := map[string]*contract.RequestedRevision{}
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
			mu.Lock()
			defer mu.Unlock()
			requested[in.TargetRevision] = in.Requested
			if in.Requested != nil && in.TargetRevision == "refs/pull/1/head" {
				return contract.ResolveResult{}, temporal.NewNonRetryableApplicationError(`app "guestbook": sync refused: the rule`, contract.ErrInvalidSource, nil)
			}
			return contract.ResolveResult{SHA: "1111111111111111111111111111111111111111"}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
	var ops []*app.OperationState
	syncReq := func(req contract.SyncRequest) {
		s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Fail("sync rejected", err) },
			OnAccept:   func() {},
			OnComplete: func(res any, err error) { s.NoError(err); ops = append(ops, res.(*app.OperationState)) },
		}, req)
	}
	s.env.RegisterDelayedCallback(func() { syncReq(contract.SyncRequest{Revision: "refs/pull/1/head"}) }, time.Second)
	s.env.RegisterDelayedCallback(func() { syncReq(contract.SyncRequest{Revision: "v1"}) }, 2*time.Second)
	s.env.RegisterDelayedCallback(func() { syncReq(contract.SyncRequest{Revision: "main"}) }, 3*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Require().Len(ops, 3)
		s.Equal(app.OperationError, ops[0].Phase)
		s.Contains(ops[0].Message, `app "guestbook": sync refused: the rule`)
		s.Equal(app.OperationSucceeded, ops[1].Phase)
		mu.Lock()
		defer mu.Unlock()
		want := &contract.RequestedRevision{App: "guestbook", Project: app.DefaultProject}
		s.Equal(want, requested["refs/pull/1/head"])
		s.Equal(want, requested["v1"])
		s.Nil(requested["main"], "the spec's own revision is not a request")
	}, 4*time.Second)
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
}
