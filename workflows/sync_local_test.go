package workflows

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

const testLocalDigest = "sha256:" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"

// TestLocalSyncThenGitAgain: a local sync renders the tree (its digest,
// with the app's source options and the tree's path) and the regions apply
// that render; the operation and its history entry record no revision and
// name the tree, as Argo CD records a local sync; the app is compared with
// Git at once and shows OutOfSync; a rollback to the local entry is
// refused; a normal sync deploys Git again.
func (s *appSuite) TestLocalSyncThenGitAgain() {
	sha := "1111111111111111111111111111111111111111"
	var mu sync.Mutex
	var renders []contract.RenderInput
	var synced []contract.Target
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
			return contract.ResolveResult{SHA: sha}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			mu.Lock()
			defer mu.Unlock()
			renders = append(renders, in)
			if in.Local != "" {
				return contract.RenderResult{Digest: "d-local", Count: 1}, nil
			}
			return contract.RenderResult{Digest: "d-git", Count: 1}, nil
		})
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.SyncInput) (contract.SyncResult, error) {
			mu.Lock()
			synced = append(synced, in.Target)
			mu.Unlock()
			return cluster.sync(ctx, in)
		})
	var ops []*app.OperationState
	update := func(req contract.SyncRequest, rejected func(error)) {
		s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) {
				if rejected == nil {
					s.Fail("sync rejected", err)
					return
				}
				rejected(err)
			},
			OnAccept: func() {},
			OnComplete: func(res any, err error) {
				s.NoError(err)
				if op, ok := res.(*app.OperationState); ok {
					ops = append(ops, op)
				}
			},
		}, req)
	}
	s.env.RegisterDelayedCallback(func() {
		mu.Lock()
		renders = nil
		mu.Unlock()
		update(contract.SyncRequest{Local: &contract.LocalSource{Digest: testLocalDigest, Path: "apps/guestbook"}}, nil)
	}, time.Second)
	s.env.RegisterDelayedCallback(func() {
		mu.Lock()
		s.Require().NotEmpty(renders)
		s.Equal(testLocalDigest, renders[0].Local, "the worker renders the tree of the digest")
		s.Equal("apps/guestbook", renders[0].Source.Path, "at the tree's path")
		s.Equal("https://git.example.com/apps.git", renders[0].Source.RepoURL, "with the app's source otherwise")
		s.Require().Len(synced, 2, "one sync per region")
		for _, t := range synced {
			s.Equal("d-local", t.Digest)
			s.Equal(testLocalDigest, t.Local, "a region without the set renders the tree again, never Git")
			s.Empty(t.SHA)
		}
		s.Require().GreaterOrEqual(len(renders), 2, "the app is compared with Git at once")
		s.Empty(renders[len(renders)-1].Local)
		mu.Unlock()
		v := s.query()
		op := v.Status.OperationState
		s.Equal(app.OperationSucceeded, op.Phase)
		s.Empty(op.Revision, "no revision, as Argo CD records a local sync")
		s.Equal(testLocalDigest, op.Local)
		s.Require().Len(v.Status.History, 1)
		e := v.Status.History[0]
		s.Empty(e.Revision)
		s.Equal(testLocalDigest, e.Local)
		s.Equal(app.SyncStatusOutOfSync, v.Status.Sync.Status, "OutOfSync with Git after a local sync")
		s.Equal(sha, v.Status.Sync.Revision)

		update(contract.SyncRequest{RollbackID: ptr(int64(0))}, func(err error) {
			s.ErrorContains(err, "history entry 0 was synced from local manifests")
		})
		update(contract.SyncRequest{Local: &contract.LocalSource{Digest: "sha256:nothex", Path: "../up"}, Revision: "main"}, func(err error) {
			for _, want := range []string{`local.digest "sha256:nothex"`, `local.path "../up"`, "not both"} {
				s.ErrorContains(err, want)
			}
		})
		update(contract.SyncRequest{}, nil)
	}, 2*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Require().Len(v.Status.History, 2)
		s.Equal(sha, v.Status.History[1].Revision, "a normal sync deploys Git again")
		s.Empty(v.Status.History[1].Local)
		s.Equal(app.SyncStatusSynced, v.Status.Sync.Status)
		s.Empty(v.Status.OperationState.Local)
	}, 3*time.Second)
	s.deleteAt(4*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
	s.Len(ops, 2)
}

// TestLocalSyncRefusedWithAutomatedSync: as Argo CD, an app with automated
// sync takes no local sync (its dry run only), and nothing renders the
// tree.
func (s *appSuite) TestLocalSyncRefusedWithAutomatedSync() {
	sha := "1111111111111111111111111111111111111111"
	var mu sync.Mutex
	locals := 0
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.ResolveInput) (contract.ResolveResult, error) {
			return contract.ResolveResult{SHA: sha}, nil
		})
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			mu.Lock()
			defer mu.Unlock()
			if in.Local != "" {
				locals++
			}
			return contract.RenderResult{Digest: "d-" + in.SHA[:4], Count: 1}, nil
		})
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
	var refusal error
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { refusal = err }, OnAccept: func() { s.Fail("a local sync of an automated app was accepted") },
			OnComplete: func(any, error) {},
		}, contract.SyncRequest{Local: &contract.LocalSource{Digest: testLocalDigest, Path: "."}})
	}, time.Second)
	s.deleteAt(2*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(true))
	s.NoError(s.env.GetWorkflowError())
	s.Require().Error(refusal)
	s.True(strings.Contains(refusal.Error(), `app "guestbook": local sync: a local sync is refused while automated sync is on`), refusal.Error())
	s.Contains(refusal.Error(), "--sync-policy none")
	s.Zero(locals)
}
