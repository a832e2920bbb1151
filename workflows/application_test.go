package workflows

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

type appSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env *testsuite.TestWorkflowEnvironment
	wf  *Workflows
	// gateStuck: the onboarding gate makes no progress (onboardGated).
	gateStuck bool
	// gateTold runs as the gate is told an app is onboarded (onboardGated).
	gateTold func()
	// syncSeen sees each Sync's input (onboardGated); an error it returns
	// fails that Sync.
	syncSeen func(contract.SyncInput) error
}

func TestApplication(t *testing.T) { suite.Run(t, new(appSuite)) }

func (s *appSuite) SetupTest() {
	s.gateStuck = false
	s.gateTold = nil
	s.syncSeen = nil
	s.newEnv(Config{Regions: regions.Of("us-east-1", "eu-west-1")})
}

func ptr[T any](v T) *T { return &v }

func (s *appSuite) newEnv(cfg Config) {
	s.env = s.NewTestWorkflowEnvironment()
	s.wf = New(cfg)
	s.env.RegisterWorkflowWithOptions(s.wf.Application, workflow.RegisterOptions{Name: contract.ApplicationWorkflow})
	// Stand-ins with the real signatures; each test says what they return.
	reg := func(fn any, name string) { s.env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
	reg(func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
		return contract.ResolveResult{}, nil
	}, contract.ActivityResolveRevision)
	reg(func(context.Context, contract.RenderInput) (contract.RenderResult, error) {
		return contract.RenderResult{}, nil
	}, contract.ActivityRender)
	reg(func(context.Context, contract.CompareInput) (contract.CompareResult, error) {
		return contract.CompareResult{}, nil
	}, contract.ActivityCompare)
	reg(func(context.Context, contract.SyncInput) (contract.SyncResult, error) {
		return contract.SyncResult{}, nil
	}, contract.ActivitySync)
	reg(func(context.Context, contract.DeleteInput) (contract.DeleteResult, error) {
		return contract.DeleteResult{}, nil
	}, contract.ActivityDeleteResources)
	registerBuiltInDefaultProject(s.env)
}

// registerBuiltInDefaultProject stands in for the project activities with
// the built-in default project's answers: it permits everything and has no
// windows. A test of a project registers its own over them.
func registerBuiltInDefaultProject(env *testsuite.TestWorkflowEnvironment) {
	env.RegisterActivityWithOptions(func(context.Context, contract.ProjectPermissionsInput) (contract.ProjectPermissionsResult, error) {
		return contract.ProjectPermissionsResult{}, nil
	}, activity.RegisterOptions{Name: contract.ActivityProjectPermissions})
	env.RegisterActivityWithOptions(func(context.Context, contract.SyncWindowsInput) (contract.SyncWindowsResult, error) {
		return contract.SyncWindowsResult{WindowDecision: app.WindowDecision{Allowed: true}}, nil
	}, activity.RegisterOptions{Name: contract.ActivitySyncWindows})
}

func (s *appSuite) AfterTest(_, _ string) { s.env.AssertExpectations(s.T()) }

func testApp(automated bool) Input {
	a := app.Application{
		APIVersion: app.APIVersion, Kind: app.Kind,
		Metadata: app.ObjectMeta{Name: "guestbook"},
		Spec: app.Spec{
			Source:       app.Source{RepoURL: "https://git.example.com/apps.git", TargetRevision: "main", Path: "guestbook"},
			Destinations: []app.Destination{{Name: "us-east-1", Namespace: "gb"}, {Name: "eu-west-1", Namespace: "gb"}},
			PollInterval: "10s",
		},
	}
	if automated {
		a.Spec.SyncPolicy = &app.SyncPolicy{Automated: &app.Automated{Prune: true}}
	}
	return Input{Application: a}
}

// fakeCluster answers Compare and Sync like two regions holding one
// Deployment. The test environment runs activities concurrently.
type fakeCluster struct {
	mu     sync.Mutex
	synced map[string]string // region -> SHA applied
}

func (f *fakeCluster) compare(_ context.Context, in contract.CompareInput) (contract.CompareResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.compareLocked(in), nil
}

func (f *fakeCluster) compareLocked(in contract.CompareInput) contract.CompareResult {
	st, health := app.SyncStatusOutOfSync, app.HealthMissing
	if f.synced[in.Region] == in.Target.SHA {
		st, health = app.SyncStatusSynced, app.HealthHealthy
	}
	return contract.CompareResult{Resources: []app.ResourceStatus{{
		ResourceKey: app.ResourceKey{Group: "apps", Kind: "Deployment", Namespace: in.Namespace, Name: "web"},
		Region:      in.Region, Status: st, Health: health,
	}}}
}

func (f *fakeCluster) sync(_ context.Context, in contract.SyncInput) (contract.SyncResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced[in.Region] = in.Target.SHA
	cmp := f.compareLocked(contract.CompareInput{Target: in.Target, Region: in.Region, Namespace: in.Namespace})
	return contract.SyncResult{Resources: cmp.Resources, Results: []app.ResourceResult{{ResourceKey: cmp.Resources[0].ResourceKey, Region: in.Region, Action: "configured"}}}, nil
}

// atOneCommit has the app resolve one commit, render one object, and
// compare with the regions of the fake cluster it returns.
func (s *appSuite) atOneCommit() *fakeCluster {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	return cluster
}

func (s *appSuite) query() contract.View {
	res, err := s.env.QueryWorkflow(contract.QueryStatus)
	s.Require().NoError(err)
	var v contract.View
	s.Require().NoError(res.Get(&v))
	return v
}

func (s *appSuite) deleteAt(d time.Duration, cascade bool) {
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateDelete, "delete", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.Fail("delete rejected", err) },
			OnAccept:   func() {},
			OnComplete: func(any, error) {},
		}, contract.DeleteRequest{Cascade: &cascade})
	}, d)
}

func (s *appSuite) TestAutoSyncOncePerRevisionThenNewCommitViaRefresh() {
	cluster := &fakeCluster{synced: map[string]string{}}
	sha := "1111111111111111111111111111111111111111"
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
			return contract.ResolveResult{SHA: sha}, nil
		})
	renders := 0
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			renders++
			return contract.RenderResult{Digest: "d-" + in.SHA[:4], Count: 1}, nil
		})
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	var syncs atomic.Int32
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			syncs.Add(1)
			return cluster.sync(ctx, in)
		})

	// Three polls on the same SHA: one render, one sync per region.
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
		s.Equal(app.HealthHealthy, v.Status.Health.Status)
		s.Equal(int32(2), syncs.Load(), "one sync per region")
		s.Equal(1, renders, "an unchanged SHA and spec is not rendered again")
		s.Len(v.Status.History, 1)
		sha = "2222222222222222222222222222222222222222"
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, 35*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(sha, v.Status.Sync.Revision)
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
		s.Equal(int32(4), syncs.Load())
		s.Equal(2, renders)
		s.Len(v.Status.History, 2)
		s.Equal(int64(1), v.Status.History[1].ID, "IDs count from 0, as in Argo CD")
		s.Equal(sha, v.Status.Regions["us-east-1"].Revision)
		s.Equal(sha, v.Status.Regions["eu-west-1"].Revision)
	}, 37*time.Second)
	s.deleteAt(40*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
}

func (s *appSuite) TestFailedAutoSyncIsNotRetriedForTheSameRevision() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	refused := temporal.NewNonRetryableApplicationError("Deployment/gb/web: apply: spec.replicas: Invalid value", contract.ErrSyncFailed, nil)
	// syncPolicy.retry.limit 2: the first attempt and two retries, then Failed; no more for this SHA.
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(contract.SyncResult{}, refused).Times(2 * 3)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Require().NotNil(v.Status.OperationState)
		s.Equal(app.OperationFailed, v.Status.OperationState.Phase)
		s.Equal(int64(2), v.Status.OperationState.RetryCount)
		s.Contains(v.Status.OperationState.Message, "spec.replicas: Invalid value")
		s.Equal(app.SyncStatusOutOfSync, v.Status.Sync.Status)
		s.Empty(v.Status.History)
	}, 55*time.Second)
	s.deleteAt(60*time.Second, false)
	in := testApp(true)
	in.Spec.SyncPolicy.Retry = &app.RetryPolicy{Limit: 2, Backoff: &app.Backoff{Duration: "1s"}}
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}

func (s *appSuite) TestValidatorsRejectBadUpdates() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{"us-east-1": "aaaaaaaaaaaaaaaa", "eu-west-1": "aaaaaaaaaaaaaaaa"}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	rejected := func(name string, arg any, want string) {
		s.env.UpdateWorkflow(name, name+"-"+want, &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.ErrorContains(err, want) },
			OnAccept:   func() { s.Fail("update accepted", "%s %+v", name, arg) },
			OnComplete: func(any, error) {},
		}, arg)
	}
	s.env.RegisterDelayedCallback(func() {
		rejected(contract.UpdateSync, contract.SyncRequest{RollbackID: ptr(int64(0))}, "rollback is not allowed while automated sync is on")
		bad := testApp(true).Application
		bad.Spec.Source.RepoURL = ""
		rejected(contract.UpdateSpec, bad, "repoURL")
		mars := testApp(true).Application
		mars.Spec.Destinations = []app.Destination{{Name: "mars"}}
		rejected(contract.UpdateSpec, mars, "mars")
		renamed := testApp(true).Application
		renamed.Metadata.Name = "other"
		rejected(contract.UpdateSpec, renamed, "cannot be renamed")
		v := s.query()
		s.Equal("https://git.example.com/apps.git", v.Spec.Source.RepoURL, "nothing changed")
	}, time.Second)
	s.deleteAt(2*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}

func (s *appSuite) TestManualSyncAndRollback() {
	sha := "1111111111111111"
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
			switch in.TargetRevision {
			case "v1", "0000000000000000":
				return contract.ResolveResult{SHA: "0000000000000000"}, nil
			}
			return contract.ResolveResult{SHA: sha}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			return contract.RenderResult{Digest: "d" + in.SHA, Count: 1}, nil
		})
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
	var ops []*app.OperationState
	syncReq := func(req contract.SyncRequest) {
		s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("sync rejected", err) },
			OnAccept: func() {},
			OnComplete: func(res any, err error) {
				s.NoError(err)
				ops = append(ops, res.(*app.OperationState))
			},
		}, req)
	}
	s.env.RegisterDelayedCallback(func() {
		s.Equal(app.SyncStatusOutOfSync, s.query().Status.Sync.Status, "not automated: no sync on its own")
		syncReq(contract.SyncRequest{Revision: "v1"})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() { syncReq(contract.SyncRequest{}) }, 2*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { s.ErrorContains(err, "no history entry with ID 7") },
			OnAccept:   func() { s.Fail("rollback to a missing entry accepted") },
			OnComplete: func(any, error) {},
		}, contract.SyncRequest{RollbackID: ptr(int64(7))})
		syncReq(contract.SyncRequest{RollbackID: ptr(int64(0))})
	}, 3*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Require().Len(ops, 3)
		s.Equal("0000000000000000", ops[0].Revision)
		s.Equal(sha, ops[1].Revision)
		s.Equal("0000000000000000", ops[2].Revision, "rollback to history entry 0")
		for _, op := range ops {
			s.Equal(app.OperationSucceeded, op.Phase)
		}
		s.Len(s.query().Status.History, 3)
	}, 4*time.Second)
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
}

func (s *appSuite) TestCascadeDeleteRemovesResourcesInEveryRegion() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	// Without a finalizer naming a policy, foreground, as argocd app delete.
	s.env.OnActivity(contract.ActivityDeleteResources, mock.Anything, contract.DeleteInput{App: "guestbook", Region: "us-east-1", Propagation: app.PropagationForeground,
		Namespace: "gb", Project: app.DefaultProject}).Return(contract.DeleteResult{}, nil).Once()
	s.env.OnActivity(contract.ActivityDeleteResources, mock.Anything, contract.DeleteInput{App: "guestbook", Region: "eu-west-1", Propagation: app.PropagationForeground,
		Namespace: "gb", Project: app.DefaultProject}).Return(contract.DeleteResult{}, nil).Once()
	s.deleteAt(time.Second, true)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
}

func (s *appSuite) TestContinueAsNewCarriesState() {
	s.newEnv(Config{Regions: regions.Of("us-east-1", "eu-west-1"), MaxReconciles: 3})
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil).Once()
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync).Twice()
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	var can *workflow.ContinueAsNewError
	s.Require().True(errors.As(s.env.GetWorkflowError(), &can), "got %v", s.env.GetWorkflowError())
	s.Equal(contract.ApplicationWorkflow, can.WorkflowType.Name)
	var next Input
	s.Require().NoError(converterFor().FromPayloads(can.Input, &next))
	s.Equal("guestbook", next.Metadata.Name)
	s.Require().NotNil(next.Carried)
	s.Equal(app.SyncStatusSynced, next.Carried.Status.Sync.Status)
	s.Len(next.Carried.Status.History, 1)
	s.Equal("aaaaaaaaaaaaaaaa/"+next.SpecDigest(), next.Carried.AutoSync.Key)
	s.Equal(int64(1), next.Carried.OperationSeq)
}

func TestJitterKeepsPollWithinBounds(t *testing.T) {
	in := testApp(false)
	s := &appState{app: in.Application}
	d, summary := s.pollDelay(time.Now())
	require.GreaterOrEqual(t, d, 10*time.Second)
	require.LessOrEqual(t, d, 11*time.Second)
	again, _ := s.pollDelay(time.Now())
	require.Equal(t, d, again, "jitter is deterministic")
	require.Equal(t, "next poll", summary)
}
