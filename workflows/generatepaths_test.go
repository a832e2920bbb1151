package workflows

import (
	"context"
	"time"

	"github.com/stretchr/testify/mock"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestRefreshesSpareRendersByPaths: without a webhook's list of files, a
// refresh that finds a new commit asks the render to look whether it moved
// a file under the app's manifest-generate-paths since the last render;
// when it did not, the last render stands for the new commit (the regions
// compare its digest, the status shows the new commit); a hard refresh
// renders without asking.
func (s *appSuite) TestRefreshesSpareRendersByPaths() {
	in := testApp(true)
	in.Metadata.Annotations = map[string]string{app.AnnotationManifestGeneratePaths: ".;/shared"}
	sha := "1111111111111111"
	var asked []*contract.PathsCheck
	renders := 0
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
			return contract.ResolveResult{SHA: sha}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			asked = append(asked, in.Unless)
			if in.Unless != nil && in.SHA == "2222222222222222" { // a commit of README.md alone
				return contract.RenderResult{Unchanged: true}, nil
			}
			renders++
			return contract.RenderResult{Digest: "d" + in.SHA, Count: 1}, nil
		})
	cluster := &fakeCluster{synced: map[string]string{}}
	var digests []string
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.CompareInput) (contract.CompareResult, error) {
			digests = append(digests, in.Target.Digest)
			in.Target.SHA = in.Target.Commit()
			return cluster.compare(ctx, in)
		})
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			in.Target.SHA = in.Target.Commit()
			return cluster.sync(ctx, in)
		})

	s.env.RegisterDelayedCallback(func() {
		s.Equal([]*contract.PathsCheck{nil}, asked, "the first render has nothing to stand for it")
		sha = "2222222222222222"
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(1, renders, "paths untouched: the last render stands")
		s.Equal(&contract.PathsCheck{Since: []string{"1111111111111111"}, Paths: [][]string{{"guestbook", "shared"}}}, asked[1])
		s.Equal(sha, v.Status.Sync.Revision)
		s.Equal("d1111111111111111", digests[len(digests)-1], "the regions compare the last render's digest")
		sha = "3333333333333333"
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, 2*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(2, renders, "paths touched: rendered")
		s.Equal([]string{"2222222222222222"}, asked[2].Since, "compared with the commit the last render stood for")
		s.Equal(sha, v.Status.Sync.Revision)
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{Hard: true})
	}, 3*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Equal(3, renders, "a hard refresh renders")
		s.Nil(asked[len(asked)-1], "a hard refresh does not ask")
	}, 4*time.Second)
	s.deleteAt(5*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}
