package workflows

import (
	"context"
	"time"

	"github.com/stretchr/testify/mock"

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
	s.env.OnActivity(ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(context.Context, ResolveInput) (ResolveResult, error) {
			resolves++
			return ResolveResult{SHA: sha}, nil
		})
	s.env.OnActivity(ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in RenderInput) (RenderResult, error) {
			renders++
			return RenderResult{Digest: "d" + in.SHA, Count: 1}, nil
		})
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(ActivityCompare, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in CompareInput) (CompareResult, error) {
			in.Target.SHA = in.Target.Commit()
			return cluster.compare(ctx, in)
		})
	s.env.OnActivity(ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in SyncInput) (SyncResult, error) {
			in.Target.SHA = in.Target.Commit()
			return cluster.sync(ctx, in)
		})

	s.env.RegisterDelayedCallback(func() {
		s.env.SignalWorkflow(SignalRefresh, RefreshRequest{Push: &Push{Ref: "refs/heads/feature", After: "ffff"}})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(1, resolves, "a push to another branch does not refresh")
		sha = "2222222222222222"
		s.env.SignalWorkflow(SignalRefresh, RefreshRequest{Push: &Push{
			Ref: "refs/heads/main", Before: "1111111111111111", After: sha, Paths: []string{"docs/README.md"}}})
	}, 2*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(2, resolves)
		s.Equal(1, renders, "paths untouched: no new render")
		s.Equal(sha, v.Status.Sync.Revision)
		sha = "3333333333333333"
		s.env.SignalWorkflow(SignalRefresh, RefreshRequest{Push: &Push{
			Ref: "refs/heads/main", Before: "2222222222222222", After: sha, Paths: []string{"guestbook/deploy.yaml"}}})
	}, 3*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(2, renders, "a push to the app's path renders")
		s.Equal(sha, v.Status.Sync.Revision)
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
	}, 4*time.Second)
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}
