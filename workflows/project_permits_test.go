package workflows

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// An app whose project no longer permits its repository and one of its
// destinations shows Argo CD's InvalidSpecError conditions, sync and health
// Unknown, and is neither compared nor synced; once the project permits it
// again, the next refresh compares and syncs it, and the conditions go.
func (s *appSuite) TestProjectThatNoLongerPermitsStopsTheCompare() {
	narrowed := app.AppProject{Metadata: app.ObjectMeta{Name: "team-a"}, Spec: app.ProjectSpec{
		SourceRepos:  []string{"https://git.example.com/other.git"},
		Destinations: []app.ProjectDestination{{Name: "us-east-1", Namespace: "gb"}},
	}}
	wide := app.AppProject{Metadata: app.ObjectMeta{Name: "team-a"}, Spec: app.ProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []app.ProjectDestination{{Name: "*", Namespace: "*"}},
	}}
	var permits atomic.Bool
	s.env.RegisterActivityWithOptions(func(_ context.Context, in contract.ProjectPermissionsInput) (contract.ProjectPermissionsResult, error) {
		s.Equal("team-a", in.Project)
		p := narrowed
		if permits.Load() {
			p = wide
		}
		return contract.ProjectPermissionsResult{InvalidSpec: p.PermissionConditions(in.Repos, in.Destinations, nil)}, nil
	}, activity.RegisterOptions{Name: contract.ActivityProjectPermissions})
	s.env.RegisterActivityWithOptions(func(context.Context, contract.SyncWindowsInput) (contract.SyncWindowsResult, error) {
		return contract.SyncWindowsResult{WindowDecision: app.WindowDecision{Allowed: true}}, nil
	}, activity.RegisterOptions{Name: contract.ActivitySyncWindows})
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "1111111111111111"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	var compares atomic.Int32
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(func(ctx context.Context, in contract.CompareInput) (contract.CompareResult, error) {
		compares.Add(1)
		s.Equal("team-a", in.Project, "the compare names the project")
		return cluster.compare(ctx, in)
	})
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)

	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(int32(0), compares.Load(), "nothing is compared")
		s.Equal(app.SyncStatusUnknown, v.Status.Sync.Status)
		s.Equal(app.HealthUnknown, v.Status.Health.Status)
		s.Equal([]app.Condition{
			{Type: "InvalidSpecError", Message: "application repo https://git.example.com/apps.git is not permitted in project 'team-a'"},
			{Type: "InvalidSpecError", Message: "application destination server 'eu-west-1' and namespace 'gb' do not match any of the allowed destinations in project 'team-a'"},
		}, v.Status.Conditions)
		s.Nil(v.Status.OperationState, "nor synced")
		permits.Store(true)
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Positive(compares.Load())
		s.Empty(v.Status.Conditions)
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status, "compared and synced")
	}, time.Minute)
	s.deleteAt(2*time.Minute, false)
	in := testApp(true)
	in.Spec.Project = "team-a"
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}

// An app of the default project asks its project too: an AppProject named
// default that does not permit its destinations stops its compare as any
// project's would.
func (s *appSuite) TestDefaultProjectObjectThatDoesNotPermitStopsTheCompare() {
	locked := app.AppProject{Metadata: app.ObjectMeta{Name: app.DefaultProject}, Spec: app.ProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []app.ProjectDestination{{Name: "*", Namespace: "allowed"}},
	}}
	s.env.RegisterActivityWithOptions(func(_ context.Context, in contract.ProjectPermissionsInput) (contract.ProjectPermissionsResult, error) {
		s.Equal(app.DefaultProject, in.Project)
		return contract.ProjectPermissionsResult{InvalidSpec: locked.PermissionConditions(in.Repos, in.Destinations, nil)}, nil
	}, activity.RegisterOptions{Name: contract.ActivityProjectPermissions})
	var compares atomic.Int32
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "1111111111111111"}, nil).Maybe()
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(func(context.Context, contract.CompareInput) (contract.CompareResult, error) {
		compares.Add(1)
		return contract.CompareResult{}, nil
	}).Maybe()
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(int32(0), compares.Load(), "nothing is compared")
		s.Equal(app.SyncStatusUnknown, v.Status.Sync.Status)
		s.Contains(v.Status.Conditions, app.Condition{Type: "InvalidSpecError",
			Message: "application destination server 'us-east-1' and namespace 'gb' do not match any of the allowed destinations in project 'default'"})
	}, time.Second)
	s.deleteAt(time.Minute, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
}
