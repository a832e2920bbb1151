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

// TestRollbackRestoresTheEntrysSources: a multi-source app whose second
// source's path changed is rolled back to its first deployment: the
// rollback renders and syncs the entry's sources (the old path) at the
// entry's revisions, the new entry records them, and the next reconcile
// renders spec.sources again.
func (s *appSuite) TestRollbackRestoresTheEntrysSources() {
	const repoA, repoB = "https://git.example.com/base.git", "https://git.example.com/extra.git"
	shaA, shaB1, shaB2 := strings.Repeat("a", 40), strings.Repeat("1", 40), strings.Repeat("2", 40)
	var mu sync.Mutex
	headB := shaB1
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case in.TargetRevision != "main":
				return contract.ResolveResult{SHA: in.TargetRevision}, nil
			case in.RepoURL == repoA:
				return contract.ResolveResult{SHA: shaA}, nil
			}
			return contract.ResolveResult{SHA: headB}, nil
		})
	var renders []contract.RenderInput
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.RenderInput) (contract.RenderResult, error) {
			mu.Lock()
			defer mu.Unlock()
			renders = append(renders, in)
			return contract.RenderResult{Digest: "d-" + in.Sources[1].Source.Path + "-" + in.SHA, Count: 1}, nil
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
	in := testApp(false)
	in.Spec.Source = app.Source{}
	in.Spec.Sources = []app.Source{
		{RepoURL: repoA, TargetRevision: "main", Path: "base"},
		{RepoURL: repoB, TargetRevision: "main", Path: "v1"},
	}
	moved := in.Application
	moved.Spec.Sources = []app.Source{in.Spec.Sources[0], {RepoURL: repoB, TargetRevision: "main", Path: "v2"}}

	s.env.RegisterDelayedCallback(func() { update(contract.UpdateSync, contract.SyncRequest{}) }, time.Second)
	s.env.RegisterDelayedCallback(func() {
		mu.Lock()
		headB = shaB2
		mu.Unlock()
		update(contract.UpdateSpec, moved)
	}, 2*time.Second)
	s.env.RegisterDelayedCallback(func() { update(contract.UpdateSync, contract.SyncRequest{}) }, 3*time.Second)
	s.env.RegisterDelayedCallback(func() {
		h := s.query().Status.History
		s.Require().Len(h, 2)
		s.Equal("v1", h[0].Sources[1].Path)
		s.Equal([]string{shaA, shaB2}, h[1].Revisions)
		mu.Lock()
		renders, synced = nil, nil
		mu.Unlock()
		update(contract.UpdateSync, contract.SyncRequest{RollbackID: ptr(int64(0))})
	}, 4*time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Require().Len(v.Status.History, 3)
		last := v.Status.History[2]
		s.Equal([]string{shaA, shaB1}, last.Revisions, "the entry's revisions")
		s.Require().Len(last.Sources, 2)
		s.Equal("v1", last.Sources[1].Path, "the new entry records the sources deployed")
		mu.Lock()
		s.Require().NotEmpty(renders)
		s.Equal("v1", renders[0].Sources[1].Source.Path, "the rollback renders the entry's sources")
		s.Equal(shaB1, renders[0].Sources[1].Revision)
		s.Require().Len(synced, 2, "one sync per region")
		for _, t := range synced {
			s.Require().Len(t.Sources, 2)
			s.Equal("v1", t.Sources[1].Source.Path, "region workers render the entry's sources on a cache miss")
			s.Equal("d-v1-"+shaA+","+shaB1, t.Digest)
		}
		renders = nil
		mu.Unlock()
		s.Equal("v2", v.Spec.Sources[1].Path, "the spec is left as it is")
		s.env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, 5*time.Second)
	s.env.RegisterDelayedCallback(func() {
		mu.Lock()
		s.Require().NotEmpty(renders, "the reconcile after a rollback renders spec.sources again")
		s.Equal("v2", renders[0].Sources[1].Source.Path)
		mu.Unlock()
		s.Equal(app.SyncStatusOutOfSync, s.query().Status.Sync.Status, "OutOfSync with spec.sources, as Argo CD after a rollback")
	}, 6*time.Second)
	s.deleteAt(7*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}
