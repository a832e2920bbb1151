package workflows

import (
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestOperationRecordsWhoInitiatedIt: a sync or rollback keeps who asked
// for it as Argo CD's operationState.operation.initiatedBy, in the status
// query and the update's answer; a request that names nobody records
// nobody.
func (s *appSuite) TestOperationRecordsWhoInitiatedIt() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
	var answered []*app.OperationState
	syncReq := func(req contract.SyncRequest) {
		s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("sync rejected", err) },
			OnAccept: func() {},
			OnComplete: func(res any, err error) {
				s.NoError(err)
				answered = append(answered, res.(*app.OperationState))
			},
		}, req)
	}
	initiatedBy := func() *app.InitiatedBy {
		op := s.query().Status.OperationState
		s.Require().NotNil(op)
		s.Equal(app.OperationSucceeded, op.Phase, op.Message)
		if op.Operation == nil {
			return nil
		}
		return op.Operation.InitiatedBy
	}
	s.env.RegisterDelayedCallback(func() {
		syncReq(contract.SyncRequest{InitiatedBy: &app.InitiatedBy{Username: "admin"}})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(&app.InitiatedBy{Username: "admin"}, initiatedBy())
		syncReq(contract.SyncRequest{RollbackID: new(int64(0)), InitiatedBy: &app.InitiatedBy{Username: "ferry-cli:ops@laptop"}})
	}, 2*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(&app.InitiatedBy{Username: "ferry-cli:ops@laptop"}, initiatedBy(), "the rollback's")
		syncReq(contract.SyncRequest{})
	}, 3*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Nil(initiatedBy(), "a request that names nobody records nobody")
		s.Require().Len(answered, 3)
		s.Equal("admin", answered[0].Operation.InitiatedBy.Username, "the update answers it too")
	}, 4*time.Second)
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
}

// TestAutomatedSyncRecordsAutomated: an automated sync names no user and
// records automated: true, as Argo CD's controller does.
func (s *appSuite) TestAutomatedSyncRecordsAutomated() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
	s.env.RegisterDelayedCallback(func() {
		op := s.query().Status.OperationState
		s.Require().NotNil(op, "the app synced on its own")
		s.Equal(app.OperationSucceeded, op.Phase, op.Message)
		s.Require().NotNil(op.Operation)
		s.Equal(&app.InitiatedBy{Automated: true}, op.Operation.InitiatedBy)
	}, 5*time.Second)
	s.deleteAt(6*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}
