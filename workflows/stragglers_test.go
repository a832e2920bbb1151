package workflows

import (
	"context"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// TestHungRegionHoldsNoOneBack: of three regions, eu-west-1's first compare
// hangs for 12 s (an API server that answers nothing) and then fails as
// unreachable; its retry answers. The two others are synced without waiting
// for it, eu-west-1 is shown Unreachable after regionAnswerTimeout, and it
// is synced once its compare answers. (With running activities the test
// environment's timers fire in wall time: this test takes about 12 s.)
func (s *appSuite) TestHungRegionHoldsNoOneBack() {
	const hung = "eu-west-1"
	s.newEnv(Config{Regions: regions.Of("us-east-1", hung, "ap-south-1")})
	s.env.SetTestTimeout(time.Minute)
	sha := "1111111111111111111111111111111111111111"
	cluster := &fakeCluster{synced: map[string]string{}}
	var mu sync.Mutex
	var log []string
	note := func(e string) {
		mu.Lock()
		defer mu.Unlock()
		log = append(log, e)
	}
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: sha}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	hungOnce := sync.Once{}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			first := false
			if in.Region == hung {
				hungOnce.Do(func() { first = true })
			}
			if first {
				time.Sleep(12 * time.Second)
				note("compare " + hung + " failed")
				return contract.CompareResult{}, temporal.NewApplicationError("Unreachable: http2: client connection lost", contract.ErrUnreachable)
			}
			return cluster.compare(ctx, in)
		})
	syncs := map[string]int{}
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			note("sync " + in.Region)
			mu.Lock()
			syncs[in.Region]++
			mu.Unlock()
			return cluster.sync(ctx, in)
		})

	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		for _, r := range []string{"us-east-1", "ap-south-1"} {
			sum := v.Status.Regions[r]
			s.Equal(app.SyncStatusSynced, sum.Sync, r)
			s.Equal(sha, sum.SyncedRevision, r)
		}
		s.NotEqual(sha, v.Status.Regions[hung].SyncedRevision)
		s.False(v.Status.Regions[hung].Unreachable, "not yet: its compare may still answer")
		s.Equal(app.SyncStatusUnknown, v.Status.Sync.Status, "a region has not answered")
		s.Require().NotNil(v.Status.OperationState)
		s.Contains(v.Status.OperationState.Message, hung)
	}, 5*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		sum := v.Status.Regions[hung]
		s.True(sum.Unreachable, "%+v", sum)
		s.Contains(sum.Message, "no answer from the region")
		s.Equal(app.SyncStatusSynced, v.Status.Regions["us-east-1"].Sync)
	}, 11*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		for _, r := range []string{"us-east-1", hung, "ap-south-1"} {
			s.Equal(app.SyncStatusSynced, v.Status.Regions[r].Sync, r)
			s.Equal(sha, v.Status.Regions[r].SyncedRevision, r)
			s.False(v.Status.Regions[r].Unreachable, r)
		}
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
		s.Empty(v.Status.Conditions)
		// The status query shows the results as Argo CD's syncResult too.
		op := v.Status.OperationState
		s.Require().NotNil(op.SyncResult)
		s.Equal(sha, op.SyncResult.Revision)
		s.Len(op.SyncResult.Resources, len(op.Results))
		s.Len(op.Results, 3, "the catch-up sync went to every region")
		for _, r := range op.SyncResult.Resources {
			s.Equal(app.ResultSynced, r.Status)
			s.Equal("Sync", r.SyncPhase)
		}
		mu.Lock()
		defer mu.Unlock()
		s.Equal(1, syncs[hung])
		s.Subset(log[:2], []string{"sync us-east-1", "sync ap-south-1"}, "the others synced before the hung compare ended: %v", log)
	}, 40*time.Second)
	s.deleteAt(45*time.Second, false)
	in := testApp(true)
	in.Spec.Destinations = append(in.Spec.Destinations, app.Destination{Name: "ap-south-1", Namespace: "gb"})
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
}
