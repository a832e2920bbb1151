package workflows

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestActivitiesGoOutByWhoWaits: a new app's first sync and the compares
// of its polls go out behind what someone waits for: a refresh's compare,
// a user's sync and the automated sync a drift asks for go first.
func (s *appSuite) TestActivitiesGoOutByWhoWaits() {
	sha := "1111111111111111"
	p := &priorities{}
	s.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{p}})
	taken := p.taken
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
			return contract.ResolveResult{SHA: sha}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		cluster.sync)

	s.env.RegisterDelayedCallback(func() {
		s.Equal([]string{"compare@5", "compare@5", "sync@5", "sync@5"}, taken(), "a new app's first compare and sync are bulk")
	}, 5*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Equal([]string{"compare@3", "compare@3"}, taken(), "a poll's compare is routine")
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, 14*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Equal([]string{"compare@1", "compare@1"}, taken(), "a refresh's compare is urgent")
		cluster.mu.Lock()
		delete(cluster.synced, "eu-west-1") // someone deleted the Deployment
		cluster.mu.Unlock()
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{Drift: &contract.Drift{Region: "eu-west-1", By: []string{"deleted"}}})
	}, 15*time.Second)
	s.env.RegisterDelayedCallback(func() {
		got := taken()
		s.Subset(got, []string{"compare@1", "sync@1"}, "a drift's compare and the self-heal it asks for are urgent")
		s.NotContains(got, "sync@5")
		s.NotContains(got, "sync@3")
		s.env.UpdateWorkflow(contract.UpdateSync, "sync", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("sync rejected", err) }, OnAccept: func() {},
			OnComplete: func(_ any, err error) { s.NoError(err) },
		}, contract.SyncRequest{})
	}, 16*time.Second)
	s.env.RegisterDelayedCallback(func() {
		got := taken()
		s.Contains(got, "sync@1", "a user's sync is urgent")
		s.NotContains(got, "sync@3")
		s.NotContains(got, "sync@5")
		s.Equal(app.SyncStatusSynced, s.query().Status.Sync.Status)
	}, 17*time.Second)
	s.deleteAt(18*time.Second, false)
	in := testApp(true)
	in.Application.Spec.SyncPolicy.Automated.SelfHeal = true
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}

// priorities notes the priority of each Compare and Sync activity a
// workflow starts, in order ("compare@5").
type priorities struct {
	interceptor.WorkerInterceptorBase
	mu   sync.Mutex
	seen []string
}

func (p *priorities) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &prioritiesIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, p: p}
}

func (p *priorities) taken() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.seen
	p.seen = nil
	return out
}

type prioritiesIn struct {
	interceptor.WorkflowInboundInterceptorBase
	p *priorities
}

func (i *prioritiesIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&prioritiesOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, p: i.p})
}

type prioritiesOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	p *priorities
}

func (o *prioritiesOut) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	name := map[string]string{contract.ActivityCompare: "compare", contract.ActivitySync: "sync"}[activityType]
	if name != "" {
		o.p.mu.Lock()
		o.p.seen = append(o.p.seen, fmt.Sprintf("%s@%d", name, workflow.GetActivityOptions(ctx).Priority.PriorityKey))
		o.p.mu.Unlock()
	}
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}
