package workflows

import (
	"context"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// activityLog records the order in which activities ran.
type activityLog struct {
	mu    sync.Mutex
	names []string
}

func (l *activityLog) add(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names = append(l.names, name)
}

func (l *activityLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.names...)
}

// onboardApp runs a new automated app in the given regions, with a worker
// polling each, until its first sync is done, and returns the activities in
// the order they ran and the status then.
func (s *appSuite) onboardApp(regions ...string) ([]string, contract.View) {
	cluster := &fakeCluster{synced: map[string]string{}}
	sha := "3333333333333333333333333333333333333333"
	var ran activityLog
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
			workers := map[string]string{}
			for _, r := range in.Regions {
				workers[r] = "worker-" + r
			}
			return contract.ResolveResult{SHA: sha, Workers: workers}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.RenderInput) (contract.RenderResult, error) {
			ran.add(contract.ActivityRender)
			return contract.RenderResult{Digest: "d", Count: 1}, nil
		})
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			ran.add(contract.ActivityCompare)
			return cluster.compare(ctx, in)
		}).Maybe()
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			ran.add(contract.ActivitySync)
			return cluster.sync(ctx, in)
		})
	var v contract.View
	s.env.RegisterDelayedCallback(func() { v = s.query() }, 3*time.Second)
	s.deleteAt(4*time.Second, false)
	// As `ferry app apply` starts a new app (StartNew).
	a := testApp(true).Application
	in := NewAppInput(&a, contract.SpecRequest{})
	var dests []app.Destination
	for _, r := range regions {
		dests = append(dests, app.Destination{Name: r, Namespace: "gb"})
	}
	in.Spec.Destinations = dests
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
	return ran.all(), v
}

// TestNewAppSyncsWithoutComparingFirst: a new automated app of one region
// renders and syncs at its first reconcile without a compare before the
// sync, and shows what the sync reported: Synced and Healthy, with an
// operation that succeeded.
func (s *appSuite) TestNewAppSyncsWithoutComparingFirst() {
	ran, v := s.onboardApp("us-east-1")
	s.Require().NotEmpty(ran)
	s.Equal([]string{contract.ActivityRender, contract.ActivitySync}, ran[:2], "the first reconcile renders, then syncs")
	s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
	s.Equal(app.HealthHealthy, v.Status.Health.Status)
	s.Require().NotNil(v.Status.OperationState)
	s.Equal(app.OperationSucceeded, v.Status.OperationState.Phase)
	s.Len(v.Status.History, 1)
	s.Len(v.Status.Resources, 1)
}

// TestNewAppOfTwoRegionsComparesFirst: with two regions the first
// reconcile compares each before it syncs, so that a region that does not
// answer is left for later rather than waited for.
func (s *appSuite) TestNewAppOfTwoRegionsComparesFirst() {
	ran, v := s.onboardApp("us-east-1", "eu-west-1")
	s.Require().Len(ran, 5)
	s.Equal([]string{contract.ActivityRender, contract.ActivityCompare, contract.ActivityCompare, contract.ActivitySync, contract.ActivitySync}, ran)
	s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
}

// TestANewAppLeavesTheOnboardQueueAfterItsFirstSync: a new app started on
// the onboarding queue, as Ferry starts one, takes its first sync there
// and then continues as new on ferry at once, carrying what it synced;
// started on ferry, it stays (TestNewAppSyncsWithoutComparingFirst).
func (s *appSuite) TestANewAppLeavesTheOnboardQueueAfterItsFirstSync() {
	s.newEnv(Config{Regions: regions.Of("us-east-1")})
	s.env.SetStartWorkflowOptions(client.StartWorkflowOptions{TaskQueue: contract.OnboardTaskQueue})
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		contract.ResolveResult{SHA: "3333333333333333333333333333333333333333", Workers: map[string]string{"us-east-1": "w"}}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			return cluster.compare(ctx, in)
		}).Maybe()
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			return cluster.sync(ctx, in)
		})
	a := testApp(true).Application
	in := NewAppInput(&a, contract.SpecRequest{})
	in.Spec.Destinations = []app.Destination{{Name: "us-east-1", Namespace: "gb"}}
	start := s.env.Now()
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.True(s.env.IsWorkflowCompleted())
	s.Less(s.env.Now().Sub(start), time.Minute, "at once, not at a later poll")
	var next *workflow.ContinueAsNewError
	s.Require().ErrorAs(s.env.GetWorkflowError(), &next, "the run continues as new once its first sync is done")
	s.Equal(contract.TaskQueue, next.TaskQueueName, "the next run is on ferry")
	var carried Input
	s.Require().NoError(converter.GetDefaultDataConverter().FromPayloads(next.Input, &carried))
	s.Require().NotNil(carried.Carried)
	s.NotNil(carried.Carried.Rendered, "what it rendered goes with it")
	s.Len(carried.Carried.Status.History, 1, "and the sync it made")
}
