package workflows

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

func multiSourceApp() Input {
	in := testApp(true)
	in.Spec.Source = app.Source{}
	in.Spec.Sources = []app.Source{
		{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.*", Helm: &app.HelmSource{ValueFiles: []string{"$values/envs/prod.yaml"}}},
		{RepoURL: "https://git.example.com/values.git", TargetRevision: "main", Ref: "values"},
	}
	return in
}

// A multi-source app resolves every source, renders them together, and
// renders again when only one of them moves; status.sync.revisions and the
// history name both revisions.
func (s *appSuite) TestMultiSourceRendersWhenAnySourceMoves() {
	cluster := &fakeCluster{synced: map[string]string{}}
	var mu sync.Mutex
	revs := map[string]string{"https://charts.example.com": "1.0.0", "https://git.example.com/values.git": strings.Repeat("a", 40)}
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
			mu.Lock()
			defer mu.Unlock()
			if in.RepoURL == "https://charts.example.com" && (in.Chart != "web" || in.TargetRevision != "1.*") {
				s.Failf("chart resolved wrong", "%+v", in)
			}
			return contract.ResolveResult{SHA: revs[in.RepoURL]}, nil
		})
	var renders []contract.RenderInput
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			mu.Lock()
			defer mu.Unlock()
			renders = append(renders, in)
			return contract.RenderResult{Digest: "d-" + in.SHA, Count: 1}, nil
		})
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)

	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
		s.Equal([]string{"1.0.0", strings.Repeat("a", 40)}, v.Status.Sync.Revisions)
		s.Require().Len(renders, 1, "unchanged revisions are not rendered again")
		s.Require().Len(renders[0].Sources, 2)
		s.Equal("1.0.0", renders[0].Sources[0].Revision)
		s.Equal("values", renders[0].Sources[1].Source.Ref)
		s.Require().Len(v.Status.History, 1)
		s.Equal([]string{"1.0.0", strings.Repeat("a", 40)}, v.Status.History[0].Revisions)
		s.Len(v.Status.History[0].Sources, 2)
		mu.Lock()
		revs["https://git.example.com/values.git"] = strings.Repeat("b", 40)
		mu.Unlock()
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, 35*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
		s.Equal([]string{"1.0.0", strings.Repeat("b", 40)}, v.Status.Sync.Revisions)
		s.Equal("1.0.0,"+strings.Repeat("b", 40), v.Status.Sync.Revision)
		s.Len(renders, 2, "a commit of the values repository alone renders again")
		s.Len(v.Status.History, 2)
	}, 37*time.Second)
	s.deleteAt(40*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, multiSourceApp())
	s.True(s.env.IsWorkflowCompleted())
	s.NoError(s.env.GetWorkflowError())
}
