package workflows

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

func TestIsRevisionName(t *testing.T) {
	for _, rev := range []string{"main", "HEAD", "v1.2.0", "release/2024-01", "refs/heads/main", "refs/pull/12/head",
		"0123456789abcdef0123456789abcdef01234567", "abc1234"} {
		require.True(t, isRevisionName(rev), rev)
	}
	for _, rev := range []string{"https://evil.example.com/x.git", "git@evil.example.com:x.git", "ssh://evil/x.git#main",
		"../other", "main~1", "main^", "-main", "main ", "a b", "main.lock", "refs//heads", "@", "main@{1}", "feature/"} {
		require.False(t, isRevisionName(rev), rev)
	}
}

func TestSyncRequestRemembersUnknownFields(t *testing.T) {
	var req contract.SyncRequest
	require.NoError(t, json.Unmarshal([]byte(`{"revision":"main","prune":true,"source":{"repoURL":"x"},"repoURL":"x"}`), &req))
	require.Equal(t, "main", req.Revision)
	require.True(t, req.Prune)
	require.Equal(t, []string{"repoURL", "source"}, req.UnknownFields())
	out, err := json.Marshal(req)
	require.NoError(t, err)
	require.JSONEq(t, `{"revision":"main","prune":true}`, string(out), "what is not known is not sent on")

	req = contract.SyncRequest{}
	require.NoError(t, json.Unmarshal([]byte(`{"initiatedBy":{"username":"admin","automated":false}}`), &req))
	require.Empty(t, req.UnknownFields(), "initiatedBy is a field of the request")
	require.Equal(t, &app.InitiatedBy{Username: "admin"}, req.InitiatedBy)
}

// TestSyncTakesOnlyTheAppsOwnRepository: a sync update that names another
// repository, or a revision that is no branch, tag or SHA, is rejected
// with every problem named, and nothing is synced.
func (s *appSuite) TestSyncTakesOnlyTheAppsOwnRepository() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	rejected := func(arg any, want ...string) {
		s.env.UpdateWorkflow(contract.UpdateSync, want[0], &testsuite.TestUpdateCallback{
			OnReject: func(err error) {
				for _, w := range want {
					s.ErrorContains(err, w)
				}
			},
			OnAccept:   func() { s.Fail("sync accepted", "%+v", arg) },
			OnComplete: func(any, error) {},
		}, arg)
	}
	s.env.RegisterDelayedCallback(func() {
		rejected(map[string]any{"revision": "main", "repoURL": "https://evil.example.com/x.git"},
			`sync request field "repoURL": a sync takes only a revision of the app's repository https://git.example.com/apps.git`)
		rejected(map[string]any{"source": map[string]any{"repoURL": "https://evil.example.com/x.git"}, "revison": "main"},
			`sync request field "source"`, `sync request field "revison" is unknown: the fields are applyOutOfSyncOnly, dryRun, force, info, initiatedBy, labels, local, prune, resources, retry, revision, rollbackID`)
		rejected(contract.SyncRequest{Info: []app.Info{{Name: "", Value: "v"}, {Name: "a", Value: "1"}, {Name: "a", Value: "2"}}},
			`sync request info[0] "": the name is empty`, `info[2] "a": the name is given again`)
		rejected(contract.SyncRequest{Revision: "https://evil.example.com/x.git"},
			`revision "https://evil.example.com/x.git" is not a branch, tag or commit SHA`, "change spec.source with ferry app apply")
	}, time.Second)
	s.deleteAt(2*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
	s.Empty(cluster.synced, "nothing synced")
}

// TestRollbackOnlyToTheAppsOwnRepository: after spec.source.repoURL
// changes, a rollback to a deployment of the old repository is rejected.
func (s *appSuite) TestRollbackOnlyToTheAppsOwnRepository() {
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	s.env.OnActivity(contract.ActivitySync, mock.Anything, mock.Anything).Return(cluster.sync)
	moved := testApp(false).Application
	moved.Spec.Source.RepoURL = "https://git.example.com/moved.git"
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateSync, "sync", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("sync rejected", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, contract.SyncRequest{})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.Require().Len(s.query().Status.History, 1)
		s.env.UpdateWorkflow(contract.UpdateSpec, "spec", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { s.Fail("spec rejected", err) }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, moved)
	}, 2*time.Second)
	s.env.RegisterDelayedCallback(func() {
		s.env.UpdateWorkflow(contract.UpdateSync, "rollback", &testsuite.TestUpdateCallback{
			OnReject: func(err error) {
				s.ErrorContains(err, "history entry 0 was deployed from https://git.example.com/apps.git, not from the app's repository https://git.example.com/moved.git")
			},
			OnAccept:   func() { s.Fail("rollback to another repository accepted") },
			OnComplete: func(any, error) {},
		}, contract.SyncRequest{RollbackID: ptr(int64(0))})
	}, 3*time.Second)
	s.deleteAt(4*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, testApp(false))
	s.NoError(s.env.GetWorkflowError())
}
