package workflows

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/regions"
)

func TestCheckOwner(t *testing.T) {
	user, platform := &contract.Owner{}, &contract.Owner{Parent: "platform"}
	for _, tc := range []struct {
		name  string
		owner *contract.Owner
		by    contract.SpecRequest
		want  []string // substrings of the refusal; nil: allowed
	}{
		{"user on own app", user, contract.SpecRequest{}, nil},
		{"parent on own child", platform, contract.SpecRequest{Parent: "platform"}, nil},
		{"user on a child", platform, contract.SpecRequest{}, []string{`app "payments" is owned by app of apps "platform"`, "--force-adopt"}},
		{"user adopts a child", platform, contract.SpecRequest{ForceAdopt: true}, nil},
		{"other parent", platform, contract.SpecRequest{Parent: "team-b", Created: true},
			[]string{`owned by app of apps "platform"`, `app of apps "team-b" cannot change or delete it`}},
		{"parent on a user's app", user, contract.SpecRequest{Parent: "team-b"},
			[]string{"owned by a user (ferry app apply)", `"team-b" cannot change`, "ferry app delete payments --cascade=false"}},
		{"parent on a user's app it listed before", user, contract.SpecRequest{Parent: "team-b", Created: true}, []string{"owned by a user"}},
		{"unrecorded, user", nil, contract.SpecRequest{}, nil},
		{"unrecorded, its creator", nil, contract.SpecRequest{Parent: "platform", Created: true}, nil},
		{"unrecorded, another parent", nil, contract.SpecRequest{Parent: "team-b"}, []string{"no recorded owner", `"team-b" did not create it`}},
		{"object on its own app", &contract.Owner{Object: "argocd/payments"}, contract.SpecRequest{Object: "argocd/payments"}, nil},
		{"object takes a user's app over", user, contract.SpecRequest{Object: "argocd/payments"}, nil},
		{"object on a child", platform, contract.SpecRequest{Object: "argocd/payments"},
			[]string{`owned by app of apps "platform"`, "Application object argocd/payments cannot change it"}},
		{"user on an object's app", &contract.Owner{Object: "argocd/payments"}, contract.SpecRequest{},
			[]string{"owned by Application object argocd/payments", "kubectl -n argocd edit application payments"}},
		{"user adopts an object's app", &contract.Owner{Object: "argocd/payments"}, contract.SpecRequest{ForceAdopt: true},
			[]string{"owned by Application object argocd/payments"}},
		{"parent on an object's app", &contract.Owner{Object: "argocd/payments"}, contract.SpecRequest{Parent: "platform", Created: true},
			[]string{"owned by Application object argocd/payments"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := contract.CheckOwner("payments", tc.owner, tc.by)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.True(t, contract.IsOwnerRefusal(err), "%v", err)
			for _, w := range tc.want {
				require.Contains(t, contract.ErrorMessage(err), w)
			}
		})
	}
}

// TestOwnerRecordedAndEnforced: a child started by its app of apps keeps
// its owner; another parent's spec or delete and a user's plain apply are
// refused and change nothing; --force-adopt makes it the user's, after
// which the parent is refused; the owner survives continue-as-new.
func (s *appSuite) TestOwnerRecordedAndEnforced() {
	s.newEnv(Config{Regions: regions.Of("us-east-1", "eu-west-1"), MaxReconciles: 3})
	s.env.OnActivity(contract.ActivityResolveRevision, mock.Anything, mock.Anything).Return(contract.ResolveResult{SHA: "aaaaaaaaaaaaaaaa"}, nil)
	s.env.OnActivity(contract.ActivityRender, mock.Anything, mock.Anything).Return(contract.RenderResult{Digest: "d", Count: 1}, nil)
	cluster := &fakeCluster{synced: map[string]string{"us-east-1": "aaaaaaaaaaaaaaaa", "eu-west-1": "aaaaaaaaaaaaaaaa"}}
	s.env.OnActivity(contract.ActivityCompare, mock.Anything, mock.Anything).Return(cluster.compare)
	update := func(name string, accept bool, want string, args ...any) {
		s.env.UpdateWorkflow(name, name+want, &testsuite.TestUpdateCallback{
			OnReject: func(err error) {
				s.True(!accept && contract.IsOwnerRefusal(err), "%s refused: %v", name, err)
				s.ErrorContains(err, want)
			},
			OnAccept:   func() { s.True(accept, "%s %s accepted", name, want) },
			OnComplete: func(any, error) {},
		}, args...)
	}
	in := testApp(false)
	in.Owner = &contract.Owner{Parent: "platform"}
	changed := testApp(false).Application
	changed.Spec.Source.Path = "elsewhere"
	s.env.RegisterDelayedCallback(func() {
		s.Equal(&contract.Owner{Parent: "platform"}, s.query().Owner)
		update(contract.UpdateSpec, false, `app of apps "team-b" cannot change`, changed, contract.SpecRequest{Parent: "team-b"})
		update(contract.UpdateSpec, false, "--force-adopt", changed) // a client that sends no SpecRequest is a user
		update(contract.UpdateDelete, false, `app of apps "team-b" cannot delete it`, contract.DeleteRequest{Parent: "team-b"})
		s.Equal("guestbook", s.query().Spec.Source.Path, "nothing changed")
		update(contract.UpdateSpec, true, "adopt", changed, contract.SpecRequest{ForceAdopt: true})
	}, time.Second)
	s.env.RegisterDelayedCallback(func() {
		v := s.query()
		s.Equal(&contract.Owner{}, v.Owner)
		s.Equal("elsewhere", v.Spec.Source.Path)
		update(contract.UpdateSpec, false, "owned by a user", testApp(false).Application, contract.SpecRequest{Parent: "platform", Created: true})
	}, 2*time.Second)
	s.env.ExecuteWorkflow(contract.ApplicationWorkflow, in)
	var can *workflow.ContinueAsNewError
	s.Require().True(errors.As(s.env.GetWorkflowError(), &can), "got %v", s.env.GetWorkflowError())
	var next Input
	s.Require().NoError(converterFor().FromPayloads(can.Input, &next))
	s.Require().NotNil(next.Carried)
	s.Equal(&contract.Owner{}, next.Carried.Owner, "the owner is carried to the next run")
}

// An Application object's deletion deletes its own app only; a user may
// delete any app, an object's too.
func TestCheckDeleteOwnerOfObjects(t *testing.T) {
	obj := &contract.Owner{Object: "argocd/payments"}
	require.NoError(t, checkDeleteOwner("payments", obj, contract.DeleteRequest{Object: "argocd/payments"}))
	require.NoError(t, checkDeleteOwner("payments", obj, contract.DeleteRequest{}))
	for _, owner := range []*contract.Owner{nil, {}, {Parent: "platform"}, {Object: "team-a/payments"}} {
		err := checkDeleteOwner("payments", owner, contract.DeleteRequest{Object: "argocd/payments"})
		require.ErrorContains(t, err, "not Application object argocd/payments's", "owner %+v", owner)
	}
}
