package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/appset"
)

// A set whose policy deletes no app asks, when deleted, that its apps be
// released rather than deleted (Argo CD drops its owner references); an
// invalid generated app is Argo CD's ApplicationValidationError, naming
// the last invalid app and how many more there are.
func TestAppSetDeletePolicyAndValidation(t *testing.T) {
	for _, policy := range []string{appset.PolicyCreateOnly, appset.PolicyCreateUpdate} {
		t.Run(policy, func(t *testing.T) {
			var ts testsuite.WorkflowTestSuite
			env := ts.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(New(Config{}).ApplicationSet, workflow.RegisterOptions{Name: contract.AppSetWorkflow})
			env.RegisterActivityWithOptions(func(_ context.Context, in contract.GenerateInput) (contract.GenerateResult, error) {
				return contract.GenerateResult{Apps: named("a"), Invalid: []string{`app "c": bad`, `app "b": bad`}}, nil
			}, activity.RegisterOptions{Name: contract.ActivityGenerateAppSet})
			var recs []contract.ReconcileInput
			env.RegisterActivityWithOptions(func(_ context.Context, in contract.ReconcileInput) (contract.ReconcileResult, error) {
				recs = append(recs, in)
				if in.DeleteAll {
					return contract.ReconcileResult{Apps: []contract.AppSetApp{{Name: "a", Action: contract.AppReleased}}}, nil
				}
				return contract.ReconcileResult{Apps: []contract.AppSetApp{{Name: "a", Action: contract.AppCreated}}, Owned: []string{"a"}}, nil
			}, activity.RegisterOptions{Name: contract.ActivityReconcileAppSet})
			env.RegisterDelayedCallback(func() {
				res, err := env.QueryWorkflow(contract.QueryStatus)
				require.NoError(t, err)
				var v contract.AppSetView
				require.NoError(t, res.Get(&v))
				seen := 0
				for _, c := range v.Status.Conditions {
					switch c.Type {
					case contract.AppSetErrorOccurred:
						seen++
						require.Equal(t, "ApplicationValidationError", c.Reason)
						require.Equal(t, `app "c": bad (and 1 more)`, c.Message)
					case contract.AppSetResourcesUpToDate:
						seen++
						require.Equal(t, "False", c.Status)
						require.Equal(t, `app "c": bad (and 1 more)`, c.Message)
					}
				}
				require.Equal(t, 2, seen, "conditions %+v", v.Status.Conditions)
				env.UpdateWorkflow(contract.UpdateAppSetDelete, "del", &testsuite.TestUpdateCallback{
					OnReject:   func(err error) { t.Errorf("delete refused: %v", err) },
					OnAccept:   func() {},
					OnComplete: func(_ any, err error) { require.NoError(t, err) },
				}, contract.DeleteAppSetRequest{})
			}, time.Second)
			set := testAppSet(t)
			set.Spec.SyncPolicy = &appset.SyncPolicy{ApplicationsSync: policy}
			env.ExecuteWorkflow(contract.AppSetWorkflow, AppSetInput{ApplicationSet: *set})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			require.Len(t, recs, 2)
			require.True(t, recs[1].DeleteAll)
			require.Equal(t, policy, recs[1].Policy)
			require.Equal(t, []string{"a"}, recs[1].Previous)
		})
	}
}
