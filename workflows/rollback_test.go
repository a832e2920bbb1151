package workflows

import (
	"context"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestRollbackRestoresTheEntrysSource: after spec.source.path and a Helm
// parameter change, a rollback renders and syncs the history entry's
// revision with the source it was deployed from, records that source in
// the new entry, and the next reconcile compares spec.source again (the app
// is OutOfSync with it, as in Argo CD).
func (s *appSuite) TestRollbackRestoresTheEntrysSource() {
	var mu sync.Mutex
	var rendered []app.Source
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
			if in.TargetRevision == "main" {
				return contract.ResolveResult{SHA: "2222222222222222"}, nil
			}
			return contract.ResolveResult{SHA: in.TargetRevision}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			mu.Lock()
			defer mu.Unlock()
			rendered = append(rendered, in.Source)
			return contract.RenderResult{Digest: "d-" + in.Source.Path + "-" + in.SHA[:4], Count: 1}, nil
		})
	cluster := &fakeCluster{synced: map[string]string{}}
	var synced []contract.Target
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			mu.Lock()
			synced = append(synced, in.Target)
			mu.Unlock()
			return cluster.sync(ctx, in)
		})
	update := func(name string, arg any) {
		s.env.UpdateWorkflow(name, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail(name+" rejected", err) }, OnAccept: func() {},
			OnComplete: func(_ any, err error) { s.NoError(err) },
		}, arg)
	}
	moved := testApp(false).Application
	moved.Spec.Source.Path = "guestbook-v2"
	moved.Spec.Source.Directory = &app.DirectorySource{Recurse: true}

	s.env.RegisterDelayedCallback(func() { update(contract.UpdateSync, contract.SyncRequest{Revision: "1111111111111111"}) }, time.Second)
	s.env.RegisterDelayedCallback(func() { update(contract.UpdateSpec, moved) }, 2*time.Second)
	s.env.RegisterDelayedCallback(func() { update(contract.UpdateSync, contract.SyncRequest{}) }, 3*time.Second)
	s.env.RegisterDelayedCallback(func() {
		h := s.query().Status.History
		s.Require().Len(h, 2)
		s.Equal("guestbook", h[0].Source.Path)
		s.Equal("guestbook-v2", h[1].Source.Path)
		mu.Lock()
		rendered, synced = nil, nil
		mu.Unlock()
		update(contract.UpdateSync, contract.SyncRequest{RollbackID: ptr(int64(0))})
	}, 4*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Require().Len(v.Status.History, 3)
		last := v.Status.History[2]
		s.Equal("1111111111111111", last.Revision)
		s.Equal("guestbook", last.Source.Path, "the new entry records the source deployed")
		s.Nil(last.Source.Directory)
		mu.Lock()
		s.Require().NotEmpty(rendered)
		s.Equal("guestbook", rendered[0].Path, "the rollback renders the entry's path")
		s.Nil(rendered[0].Directory, "and the entry's options")
		s.Require().Len(synced, 2, "one sync per region")
		for _, t := range synced {
			s.Equal("guestbook", t.Source.Path, "region workers render the entry's source on a cache miss")
			s.Equal("d-guestbook-1111", t.Digest)
		}
		rendered = nil
		mu.Unlock()
		s.Equal("guestbook-v2", v.Spec.Source.Path, "the spec is left as it is")
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, 5*time.Second)
	s.env.RegisterDelayedCallback(func() {
		mu.Lock()
		s.Require().NotEmpty(rendered, "the reconcile after a rollback renders spec.source again")
		s.Equal("guestbook-v2", rendered[0].Path)
		mu.Unlock()
		s.Equal(app.SyncStatusOutOfSync, s.query().Status.Sync.Status, "OutOfSync with spec.source, as Argo CD after a rollback")
	}, 6*time.Second)
	s.deleteAt(7*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
}
