package workflows

import (
	"context"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestASelectiveSyncNarrowsTheRegionSyncs: a sync request naming a
// resource hands the selection, Force and its own retry policy to every
// region's sync, and writes no history entry, as Argo CD's selective sync.
func (s *appSuite) TestASelectiveSyncNarrowsTheRegionSyncs() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 2}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	var inputs []contract.SyncInput
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
		inputs = append(inputs, in)
		return cluster.sync(ctx, in)
	})
	one := app.SyncResource{Kind: "ConfigMap", Name: "one"}
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateSync, "sync", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Fail("sync rejected", err) },
			OnAccept:   func() {},
			OnComplete: func(_ any, err error) { s.NoError(err) },
		}, contract.SyncRequest{Resources: []app.SyncResource{one}, Force: true, Retry: &app.RetryPolicy{Limit: 1}})
		s.env.UpdateWorkflow(contract.UpdateSync, "bad", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Contains(err.Error(), `labels: label "novalue": want key=value`) },
			OnAccept:   func() { s.Fail("a malformed label is refused") },
			OnComplete: func(any, error) {},
		}, contract.SyncRequest{Labels: []string{"novalue"}})
	}, 5*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Require().Len(inputs, 2)
		for _, in := range inputs {
			s.Require().NotNil(in.Selection)
			s.Equal([]app.SyncResource{one}, in.Selection.Resources)
			s.Contains(in.SyncOptions, "Force=true")
		}
		v := s.query()
		s.Equal(app.OperationSucceeded, v.Status.OperationState.Phase)
		s.Empty(v.Status.History, "a selective sync writes no history entry")
	}, 20*time.Second)
	s.deleteAt(30*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
}
