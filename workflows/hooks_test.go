package workflows

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/suite"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

type hooksSuite struct {
	suite.Suite
	testsuite.WorkflowTestSuite
	env     *testsuite.TestWorkflowEnvironment
	cluster *fakeCluster
	mu      sync.Mutex
	calls   []string // "RunHooks PreSync us-east-1", "Sync us-east-1", …
	// progressing keeps synced resources Progressing (not yet Healthy).
	progressing atomic.Bool
}

func TestHooks(t *testing.T) { suite.Run(t, new(hooksSuite)) }

func (s *hooksSuite) SetupTest() {
	s.env = s.NewTestWorkflowEnvironment()
	s.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: contract.WorkflowID("guestbook")})
	s.calls = nil
	wf := New(Config{Regions: regions.Of("us-east-1", "eu-west-1")})
	s.env.RegisterWorkflowWithOptions(wf.Application, workflow.RegisterOptions{Name: contract.ApplicationWorkflow})
	s.env.RegisterWorkflowWithOptions(wf.PostSyncHooks, workflow.RegisterOptions{Name: contract.PostSyncWorkflow})
	reg := func(fn any, name string) { s.env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
	registerBuiltInDefaultProject(s.env)
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
	reg(func(context.Context, contract.SyncInput) (contract.SyncResult, error) {
		return contract.SyncResult{}, nil
	}, contract.ActivitySyncWithHooks)
	reg(func(context.Context, contract.DeleteInput) (contract.DeleteResult, error) {
		return contract.DeleteResult{}, nil
	}, contract.ActivityDeleteResources)
	reg(func(context.Context, contract.RunHooksInput) (contract.RunHooksResult, error) {
		return contract.RunHooksResult{}, nil
	}, contract.ActivityRunHooks)
	reg(func(context.Context, contract.DeleteHooksInput) error { return nil }, contract.ActivityDeleteHooks)

	s.cluster = &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.progressing.Store(false)
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			out, err := s.cluster.compare(ctx, in)
			s.settle(out.Resources)
			return out, err
		})
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			s.record("Sync " + in.Region)
			out, err := s.cluster.sync(ctx, in)
			s.settle(out.Resources)
			return out, err
		}).Maybe()
}

// settle makes synced resources Progressing while s.progressing holds.
func (s *hooksSuite) settle(rs []app.ResourceStatus) {
	for i := range rs {
		if s.progressing.Load() && rs[i].Health == app.HealthHealthy {
			rs[i].Health = app.HealthProgressing
		}
	}
}

func (s *hooksSuite) AfterTest(_, _ string) { s.env.AssertExpectations(s.T()) }

func (s *hooksSuite) record(call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
}

func (s *hooksSuite) recorded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func (s *hooksSuite) renders(hooks map[string]int) {
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 3, Hooks: hooks}, nil)
}

// runHooks answers RunHooks: one Job per phase and region, Succeeded
// unless fail names the phase and region ("PreSync us-east-1").
func (s *hooksSuite) runHooks(fail string) {
	s.env.OnActivity(contract.ActivityRunHooks, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RunHooksInput) (contract.RunHooksResult, error) {
			call := in.Phase + " " + in.Region
			s.record("RunHooks " + call + " " + in.OperationID)
			res := contract.HookResult{ResourceKey: app.ResourceKey{Group: "batch", Kind: "Job", Namespace: in.Namespace, Name: strings.ToLower(in.Phase)},
				Region: in.Region, Phase: in.Phase, Status: "Succeeded", Message: "job completed"}
			if call == fail {
				res.Status, res.Message, res.Delete = "Failed", `BackoffLimitExceeded; pod x: container "main" exited with code 1 (Error)`, true
				out := contract.RunHooksResult{Hooks: []contract.HookResult{res}}
				return out, temporal.NewNonRetryableApplicationError(in.Region+": "+in.Phase+" hook Job/gb/"+res.Name+" failed: "+res.Message, contract.ErrHookFailed, nil, out)
			}
			return contract.RunHooksResult{Hooks: []contract.HookResult{res}}, nil
		})
}

func (s *hooksSuite) sync(at time.Duration, check func(*app.OperationState)) {
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("sync rejected", err) },
			OnAccept: func() {},
			OnComplete: func(res any, err error) {
				s.NoError(err)
				check(res.(*app.OperationState))
			},
		}, contract.SyncRequest{})
	}, at)
}

func (s *hooksSuite) query() contract.View {
	res, err := s.env.QueryWorkflow(contract.QueryStatus)
	s.Require().NoError(err)
	var v contract.View
	s.Require().NoError(res.Get(&v))
	return v
}

func (s *hooksSuite) deleteAt(d time.Duration, cascade bool) {
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateDelete, "delete", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("delete rejected", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.DeleteRequest{Cascade: &cascade})
	}, d)
}

func (s *hooksSuite) TestPreSyncHooksRunInEveryRegionBeforeAnySync() {
	s.renders(map[string]int{contract.HookPreSync: 1})
	s.runHooks("")
	s.sync(time.Second, func(op *app.OperationState) {
		s.Equal(app.OperationSucceeded, op.Phase, op.Message)
		var hooks []string
		for _, r := range op.Results {
			if r.HookType != "" {
				hooks = append(hooks, r.HookType+" "+r.Region+" "+r.HookPhase)
			}
		}
		s.ElementsMatch([]string{"PreSync us-east-1 Succeeded", "PreSync eu-west-1 Succeeded"}, hooks)
	})
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())

	calls := s.recorded()
	s.Require().Len(calls, 4, "%v", calls)
	for _, c := range calls[:2] {
		s.True(strings.HasPrefix(c, "RunHooks PreSync "), "PreSync first: %v", calls)
		// The operation ID: the operation's number and a tag of the workflow chain.
		s.Regexp(`^RunHooks PreSync \S+ 1-[0-9a-f]{8}$`, c)
	}
	s.ElementsMatch([]string{"Sync us-east-1", "Sync eu-west-1"}, calls[2:])
}

func (s *hooksSuite) TestAFailedPreSyncHookRunsSyncFailAndSyncsNothing() {
	s.renders(map[string]int{contract.HookPreSync: 1, contract.HookSyncFail: 1, contract.HookPostSync: 1})
	s.runHooks("PreSync eu-west-1")
	var deleted []contract.DeleteHooksInput
	s.env.OnActivity(contract.ActivityDeleteHooks, mock.Anything, mock.Anything).Return(func(_ context.Context, in contract.DeleteHooksInput) error {
		deleted = append(deleted, in)
		return nil
	})
	s.sync(time.Second, func(op *app.OperationState) {
		s.Equal(app.OperationFailed, op.Phase)
		s.Contains(op.Message, `eu-west-1: PreSync hook Job/gb/presync failed: BackoffLimitExceeded; pod x: container "main" exited with code 1 (Error)`)
		s.Contains(op.Message, "nothing of the Sync phase was applied")
		s.Contains(op.Message, "2 SyncFail hooks ran")
		s.Nil(op.PostSync, "no PostSync after a failed operation")
	})
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())

	calls := s.recorded()
	for _, c := range calls {
		s.False(strings.HasPrefix(c, "Sync "), "nothing synced: %v", calls)
		s.NotContains(c, "PostSync")
	}
	s.Len(calls, 4, "PreSync and SyncFail in both regions: %v", calls)
	s.True(strings.HasPrefix(calls[2], "RunHooks SyncFail ") && strings.HasPrefix(calls[3], "RunHooks SyncFail "), "%v", calls)
	s.Require().Len(deleted, 1, "the failed hook's HookFailed policy")
	s.Equal(contract.DeleteHooksInput{App: "guestbook", Region: "eu-west-1", OperationID: deleted[0].OperationID, Phase: contract.HookPreSync,
		Hooks: []app.ResourceKey{{Group: "batch", Kind: "Job", Namespace: "gb", Name: "presync"}}}, deleted[0])
}

func (s *hooksSuite) TestPostSyncRunsInAChildWorkflowThatReportsBack() {
	s.renders(map[string]int{contract.HookPostSync: 1})
	// The PostSync hooks take a minute: the operation does not wait for them.
	s.env.OnActivity(contract.ActivityRunHooks, mock.Anything, mock.Anything).After(time.Minute).Return(
		func(_ context.Context, in contract.RunHooksInput) (contract.RunHooksResult, error) {
			s.record("RunHooks " + in.Phase + " " + in.Region)
			return contract.RunHooksResult{Hooks: []contract.HookResult{{ResourceKey: app.ResourceKey{Group: "batch", Kind: "Job", Name: "after"},
				Region: in.Region, Phase: in.Phase, Status: "Succeeded", Message: "job completed"}}}, nil
		})
	var started []string
	s.env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		started = append(started, info.WorkflowType.Name+" "+info.WorkflowExecution.ID+" parent "+info.ParentWorkflowExecution.ID)
	})
	var opDone time.Time
	s.sync(time.Second, func(op *app.OperationState) {
		opDone = s.env.Now()
		s.Equal(app.OperationSucceeded, op.Phase)
		s.Require().NotNil(op.PostSync)
		s.Equal(app.OperationRunning, op.PostSync.Phase)
		s.Regexp(`^app/guestbook/postsync/1-[0-9a-f]{8}$`, op.PostSync.WorkflowID)
		s.Empty(s.recorded()[2:], "no PostSync hook has run when the operation completes")
	})
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		post := v.Status.OperationState.PostSync
		s.Require().NotNil(post)
		s.Equal(app.OperationSucceeded, post.Phase, post.Message)
		s.Equal("2 PostSync hooks succeeded", post.Message)
		s.Len(post.Results, 2)
		s.NotNil(post.FinishedAt)
	}, 2*time.Minute)
	s.deleteAt(3*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
	s.False(opDone.IsZero())
	s.Require().Len(started, 1)
	s.Regexp(`^PostSyncHooks app/guestbook/postsync/1-[0-9a-f]{8} parent app/guestbook$`, started[0])
}

func (s *hooksSuite) TestPostDeleteHooksRunAfterACascadingDelete() {
	s.renders(map[string]int{contract.HookPostDelete: 1})
	s.runHooks("")
	s.env.OnActivity(contract.ActivityDeleteResources, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.DeleteInput) (contract.DeleteResult, error) {
			s.record("DeleteResources " + in.Region)
			return contract.DeleteResult{}, nil
		})
	s.deleteAt(time.Second, true)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
	calls := s.recorded()
	s.Require().Len(calls, 4, "%v", calls)
	s.ElementsMatch([]string{"DeleteResources us-east-1", "DeleteResources eu-west-1"}, calls[:2])
	for _, c := range calls[2:] {
		s.Regexp(`^RunHooks PostDelete \S+ 0-[0-9a-f]{8}-delete$`, c)
	}
}

func (s *hooksSuite) TestAnAppWithoutHooksRunsNone() {
	s.renders(nil)
	s.sync(time.Second, func(op *app.OperationState) {
		s.Equal(app.OperationSucceeded, op.Phase)
		s.Nil(op.PostSync)
	})
	s.deleteAt(2*time.Second, true)
	s.env.OnActivity(contract.ActivityDeleteResources, mock.Anything, mock.Anything).Return(contract.DeleteResult{}, nil)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
	s.Equal([]string{"Sync eu-west-1", "Sync us-east-1"}, slices.Sorted(slices.Values(s.recorded())))
}

func (s *hooksSuite) TestSyncHooksRunWithinTheSync() {
	s.renders(map[string]int{contract.HookSync: 2})
	s.env.OnActivity(contract.ActivitySyncWithHooks, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			s.record("SyncWithHooks " + in.Region + " " + in.OperationID)
			out, err := s.cluster.sync(ctx, in)
			out.Hooks = []contract.HookResult{{ResourceKey: app.ResourceKey{Group: "batch", Kind: "Job", Name: "maint-page-up"},
				Region: in.Region, Phase: contract.HookSync, Wave: 1, Status: "Succeeded", Delete: true}}
			return out, err
		})
	var deleted []string
	s.env.OnActivity(contract.ActivityDeleteHooks, mock.Anything, mock.Anything).Return(func(_ context.Context, in contract.DeleteHooksInput) error {
		deleted = append(deleted, in.Region+" "+in.Phase+" "+in.Hooks[0].Name)
		return nil
	})
	s.sync(time.Second, func(op *app.OperationState) {
		s.Equal(app.OperationSucceeded, op.Phase, op.Message)
		n := 0
		for _, r := range op.Results {
			if r.HookType == contract.HookSync {
				n++
			}
		}
		s.Equal(2, n, "one Sync hook per region in the results")
	})
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
	calls := s.recorded()
	s.Require().Len(calls, 2, "%v", calls)
	for _, c := range calls {
		s.Regexp(`^SyncWithHooks \S+ 1-[0-9a-f]{8}$`, c)
	}
	s.ElementsMatch([]string{"us-east-1 Sync maint-page-up", "eu-west-1 Sync maint-page-up"}, deleted)
}

func (s *hooksSuite) TestPostSyncWaitsUntilEveryRegionIsHealthy() {
	s.renders(map[string]int{contract.HookPostSync: 1})
	s.runHooks("")
	s.progressing.Store(true)
	s.sync(time.Second, func(op *app.OperationState) {
		s.Equal(app.OperationSucceeded, op.Phase)
		s.Require().NotNil(op.PostSync)
		s.Equal(app.OperationRunning, op.PostSync.Phase)
		s.Empty(op.PostSync.WorkflowID, "not started while resources are Progressing")
		s.Contains(op.PostSync.Message, "us-east-1 is Synced and Progressing")
	})
	s.env.RegisterDelayedCallback(func() {
		s.Empty(s.query().Status.OperationState.PostSync.WorkflowID)
		s.NotContains(strings.Join(s.recorded(), ","), "PostSync")
		s.progressing.Store(false)
	}, 30*time.Second)
	s.env.RegisterDelayedCallback(func() {
		post := s.query().Status.OperationState.PostSync
		s.Regexp(`^app/guestbook/postsync/1-[0-9a-f]{8}$`, post.WorkflowID)
		s.Equal(app.OperationSucceeded, post.Phase, post.Message)
	}, 60*time.Second)
	s.deleteAt(70*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
}

func (s *hooksSuite) TestPostSyncIsNotRunWhenRegionsNeverSettle() {
	s.renders(map[string]int{contract.HookPostSync: 1})
	s.progressing.Store(true)
	s.sync(time.Second, func(op *app.OperationState) { s.Equal(app.OperationSucceeded, op.Phase) })
	s.env.RegisterDelayedCallback(func() {
		post := s.query().Status.OperationState.PostSync
		s.Equal(app.OperationFailed, post.Phase)
		s.Contains(post.Message, "PostSync hooks not run: not every region became Synced and Healthy within 5m0s")
		s.Empty(post.WorkflowID)
	}, 10*time.Minute)
	s.deleteAt(11*time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
	s.NotContains(strings.Join(s.recorded(), ","), "RunHooks")
}
