package workflows

import (
	"context"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// TestDeletePropagation: a cascading delete deletes with the request's
// policy, else the one the app's finalizer names, else foreground; a
// delete without cascade deletes nothing; an unknown policy, or one given
// with cascade false, is rejected.
func (s *appSuite) TestDeletePropagation() {
	yes, no := true, false
	cases := []struct {
		name      string
		finalizer string
		req       contract.DeleteRequest
		want      string // "": no DeleteResources
		rejected  string
	}{
		{name: "cascade, no finalizer", req: contract.DeleteRequest{Cascade: &yes}, want: app.PropagationForeground},
		{name: "cascade, background finalizer", finalizer: app.BackgroundFinalizer, req: contract.DeleteRequest{Cascade: &yes}, want: app.PropagationBackground},
		{name: "policy over finalizer", finalizer: app.BackgroundFinalizer, req: contract.DeleteRequest{Cascade: &yes, Propagation: "orphan"}, want: app.PropagationOrphan},
		{name: "left out, finalizer decides", finalizer: app.ResourcesFinalizer, req: contract.DeleteRequest{Parent: ""}, want: app.PropagationForeground},
		{name: "left out, no finalizer", req: contract.DeleteRequest{}},
		{name: "left out, a policy asks", req: contract.DeleteRequest{Propagation: "background"}, want: app.PropagationBackground},
		{name: "cascade false over finalizer", finalizer: app.ResourcesFinalizer, req: contract.DeleteRequest{Cascade: &no}},
		{name: "unknown policy", req: contract.DeleteRequest{Propagation: "sideways"}, rejected: `delete propagation policy "sideways" is unknown: want foreground, background or orphan`},
		{name: "policy without cascade", req: contract.DeleteRequest{Cascade: &no, Propagation: "foreground"}, rejected: "cascade is false"},
	}
	for _, c := range cases {
		s.Run(c.name, func() {
			s.newEnv(Config{Regions: regions.Of("us-east-1", "eu-west-1")})
			s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
			s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
			cluster := &fakeCluster{synced: map[string]string{}}
			s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
			var got []string
			s.env.OnActivity(contract.ActivityDeleteResources, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in contract.DeleteInput) (contract.DeleteResult, error) {
					got = append(got, in.Propagation)
					return contract.DeleteResult{}, nil
				}).Maybe()
			s.env.RegisterDelayedCallback(func() {
				s.env.UpdateWorkflow(contract.UpdateDelete, "first-delete", &testsuite.TestUpdateCallback{
					OnReject: func(err error) {
						if c.rejected == "" {
							s.Fail("delete rejected", err)
						}
						s.ErrorContains(err, c.rejected)
					},
					OnAccept: func() {
						if c.rejected != "" {
							s.Fail("delete accepted", c.rejected)
						}
					},
					OnComplete: func(any, error) {},
				}, c.req)
			}, time.Second)
			if c.rejected != "" {
				s.deleteAt(2*time.Second, false)
			}
			in := testApp(false)
			if c.finalizer != "" {
				in.Metadata.Finalizers = []string{c.finalizer}
			}
			s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
			s.NoError(s.env.GetWorkflowError())
			if c.want == "" {
				s.Empty(got, "no resources deleted")
			} else {
				s.Equal([]string{c.want, c.want}, got, "one delete per region")
			}
		})
	}
}

// TestCascadeDeleteOfAnAppOfAppsDeletesItsChildren: the cascading delete of
// an app of apps deletes the child apps it created (their own finalizers
// decide about their resources); --cascade=false leaves them running.
func (s *appSuite) TestCascadeDeleteOfAnAppOfAppsDeletesItsChildren() {
	for _, cascade := range []bool{true, false} {
		s.newEnv(Config{Regions: regions.Of("us-east-1", "eu-west-1")})
		children := []app.Application{{Metadata: app.ObjectMeta{Name: "child-a"}}, {Metadata: app.ObjectMeta{Name: "child-b"}}}
		reg := func(fn any, name string) { s.env.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name}) }
		reg(func(context.Context, contract.ChildrenInput) (contract.CompareChildrenResult, error) {
			return contract.CompareChildrenResult{}, nil
		}, contract.ActivityCompareChildren)
		reg(func(_ context.Context, in contract.ChildrenInput) (contract.SyncChildrenResult, error) {
			return contract.SyncChildrenResult{Applied: []string{"child-a", "child-b"}}, nil
		}, contract.ActivitySyncChildren)
		var deleted []contract.ChildrenInput
		reg(func(_ context.Context, in contract.ChildrenInput) (contract.DeleteChildrenResult, error) {
			deleted = append(deleted, in)
			return contract.DeleteChildrenResult{Deleted: in.Previous}, nil
		}, contract.ActivityDeleteChildren)
		s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
		s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Children: children}, nil)
		cluster := &fakeCluster{synced: map[string]string{}}
		s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
		s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
		s.env.OnActivity(contract.ActivityDeleteResources, mock.Anything, mock.Anything).Return(contract.DeleteResult{}, nil).Maybe()
		s.env.RegisterDelayedCallback(func() {
			s.env.UpdateWorkflow(contract.UpdateSync, "sync", &testsuite.TestUpdateCallback{
				OnReject: func(err error) { s.Fail("sync rejected", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
			}, contract.SyncRequest{})
		}, time.Second)
		s.deleteAt(2*time.Second, cascade)
		s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
		s.NoError(s.env.GetWorkflowError())
		if !cascade {
			s.Empty(deleted, "--cascade=false leaves the child apps")
			continue
		}
		s.Require().Len(deleted, 1)
		s.Equal(contract.ChildrenInput{Parent: "guestbook", Previous: []string{"child-a", "child-b"}}, deleted[0])
	}
}

// TestCascadeDeleteLeavesARegionThatIsGone: a region whose cluster Secret
// was removed is left out of the cascading delete, as Argo CD deletes an
// app whose cluster is gone without touching it; the app goes, deleted
// from the regions that remain.
func (s *appSuite) TestCascadeDeleteLeavesARegionThatIsGone() {
	base, err := regions.New([]regions.Region{{Name: "us-east-1"}})
	s.Require().NoError(err)
	live := regions.NewLive(base)
	s.Require().Empty(live.SetClusters([]regions.Region{{Name: "eu-west-1", Server: "https://eu.example:6443"}}))
	s.newEnv(Config{Regions: live})
	s.atOneCommit()
	var deletedIn []string
	s.env.OnActivity(contract.ActivityDeleteResources, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.DeleteInput) (contract.DeleteResult, error) {
			deletedIn = append(deletedIn, in.Region)
			return contract.DeleteResult{}, nil
		})
	s.env.RegisterDelayedCallback(func() { live.SetClusters(nil) }, time.Second)
	s.deleteAt(2*time.Second, true)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
	s.Equal([]string{"us-east-1"}, deletedIn, "eu-west-1 is gone: nothing is deleted there")
}
