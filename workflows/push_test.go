package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestWebhookPushes: a push to another branch is ignored; a push that
// touched none of the app's manifest-generate-paths moves the revision
// without rendering again; one that did renders.
func (s *appSuite) TestWebhookPushes() {
	in := testApp(true)
	in.Metadata.Annotations = map[string]string{app.AnnotationManifestGeneratePaths: "."}
	sha := "1111111111111111"
	resolves, renders := 0, 0
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
			resolves++
			return contract.ResolveResult{SHA: sha}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			renders++
			return contract.RenderResult{Digest: "d" + in.SHA, Count: 1}, nil
		})
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			in.Target.SHA = in.Target.Commit()
			return cluster.compare(ctx, in)
		})
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			in.Target.SHA = in.Target.Commit()
			return cluster.sync(ctx, in)
		})

	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{Push: &contract.Push{Ref: "refs/heads/feature", After: "ffff"}})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(1, resolves, "a push to another branch does not refresh")
		sha = "2222222222222222"
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{Push: &contract.Push{
			Ref: "refs/heads/main", Before: "1111111111111111", After: sha, Paths: []string{"docs/README.md"}}})
	}, 2*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(2, resolves)
		s.Equal(1, renders, "paths untouched: no new render")
		s.Equal(sha, v.Status.Sync.Revision)
		sha = "3333333333333333"
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{Push: &contract.Push{
			Ref: "refs/heads/main", Before: "2222222222222222", After: sha, Paths: []string{"guestbook/deploy.yaml"}}})
	}, 3*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(2, renders, "a push to the app's path renders")
		s.Equal(sha, v.Status.Sync.Revision)
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
	}, 4*time.Second)
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}

// TestPushMovesApp: a push refreshes a multi-source app when it moved the
// branch that a Git source of the pushed repository tracks (a ref source
// too); a push to a repository no source names, or to another branch, is
// ignored; a push that names no repository is read as before.
func TestPushMovesApp(t *testing.T) {
	const chart, values, manifests = "https://charts.example.com", "https://git.example.com/values.git", "https://git.example.com/manifests.git"
	multi := &app.Application{Spec: app.Spec{Sources: []app.Source{
		{RepoURL: chart, Chart: "web", TargetRevision: "1.*"},
		{RepoURL: manifests, Path: "base"},
		{RepoURL: values, TargetRevision: "release", Ref: "values"},
	}}}
	single := &app.Application{Spec: app.Spec{Source: app.Source{RepoURL: manifests, TargetRevision: "main"}}}
	tests := []struct {
		name string
		a    *app.Application
		push contract.Push
		want bool
	}{
		{"values branch moved", multi, contract.Push{Repos: []string{values}, Ref: "refs/heads/release"}, true},
		{"values, another branch", multi, contract.Push{Repos: []string{values}, Ref: "refs/heads/main", DefaultBranch: true}, false},
		{"manifests HEAD moved", multi, contract.Push{Repos: []string{manifests}, Ref: "refs/heads/main", DefaultBranch: true}, true},
		{"manifests, another branch", multi, contract.Push{Repos: []string{manifests}, Ref: "refs/heads/feature"}, false},
		{"a repository no source names", multi, contract.Push{Repos: []string{"https://git.example.com/other.git"}, Ref: "refs/heads/release"}, false},
		{"no repository named: as before", multi, contract.Push{Ref: "refs/heads/main", DefaultBranch: true}, true},
		{"single source", single, contract.Push{Repos: []string{manifests}, Ref: "refs/heads/main"}, true},
		{"single source, another branch", single, contract.Push{Repos: []string{manifests}, Ref: "refs/heads/dev"}, false},
	}
	for _, tt := range tests {
		if got := pushMovesApp(tt.a, &tt.push); got != tt.want {
			t.Errorf("%s: pushMovesApp = %v, want %v", tt.name, got, tt.want)
		}
	}
}
