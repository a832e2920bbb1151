package workflows

import (
	"context"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// A new app that StartNew starts runs as one that Apply's spec update
// created: its first resolve may take the shared listing (a refresh the
// refs cache may answer, not a forced ls-remote), it belongs to the one who applied it, and it syncs.
func (s *appSuite) TestStartNewRunsAsTheSpecUpdateLeavesANewApp() {
	sha := "1111111111111111111111111111111111111111"
	var fresh []bool
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
			fresh = append(fresh, in.Fresh)
			return contract.ResolveResult{SHA: sha}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
		s.Equal(app.HealthHealthy, v.Status.Health.Status)
		s.Require().NotNil(v.Owner)
		s.Equal(contract.Owner{Parent: "apps"}, *v.Owner)
		s.Require().NotEmpty(fresh)
		s.False(fresh[0], "the first reconcile of a new app takes the listing other apps share, as the spec update leaves it")
		s.Len(v.Status.History, 1)
	}, 5*time.Second)
	s.deleteAt(8*time.Second, false)
	a := testApp(true).Application
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, NewAppInput(&a, contract.SpecRequest{Parent: "apps"}))
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
}
