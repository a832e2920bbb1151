package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// An app ferry import brought in shadow is Argo CD's still: a sync or a
// rollback is refused with what to do, a dry run is not.
func (s *appSuite) TestAnAppInShadowIsNotSynced() {
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	in := shadowApp()
	for _, req := range []contract.SyncRequest{{}, {Prune: true}, {RollbackID: ptr(int64(0))}} {
		s.env.RegisterDelayedCallback(func() {
			s.env.UpdateWorkflow(contract.UpdateSync, "", &testsuite.TestUpdateCallback{
				OnReject: func(err error) {
					s.ErrorContains(err, `app "guestbook" runs in shadow (annotation ferry.dev/shadow)`)
					s.ErrorContains(err, "ferry app takeover guestbook")
				},
				OnAccept:   func() { s.Fail("sync accepted", "%+v", req) },
				OnComplete: func(any, error) {},
			}, req)
		}, time.Second)
	}
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Nil(v.Status.OperationState, "no operation ran")
		s.Empty(cluster.synced, "nothing was written")
	}, 2*time.Second)
	s.deleteAt(3*time.Second, false)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	s.NoError(s.env.GetWorkflowError())
}

func TestADryRunOfAnAppInShadowIsValid(t *testing.T) {
	in := shadowApp()
	st := &appState{app: in.Application}
	require.NoError(t, st.validateSync(nil, contract.SyncRequest{DryRun: true}))
	require.ErrorContains(t, st.validateSync(nil, contract.SyncRequest{}), "runs in shadow")
}

func shadowApp() Input {
	in := testApp(false)
	in.Metadata.Annotations = map[string]string{app.AnnotationShadow: `{"from":"argocd/guestbook"}`}
	return in
}
