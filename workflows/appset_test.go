package workflows

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
)

func testAppSet(t *testing.T) *appset.ApplicationSet {
	s, err := appset.Read([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: team}
spec:
  generators: [{list: {elements: [{n: a}]}}]
  template:
    metadata: {name: '{{n}}'}
    spec: {source: {repoURL: 'https://git.example.com/r.git', path: '{{n}}'}, destination: {name: us-east-1, namespace: x}}
`))
	require.NoError(t, err)
	return s
}

func named(names ...string) []app.Application {
	var out []app.Application
	for _, n := range names {
		out = append(out, app.Application{Metadata: app.ObjectMeta{Name: n}})
	}
	return out
}

// The set reconciles what its generators yield against the apps it owns:
// the apps it created are the previous ones of the next round, a refresh
// runs the generators with Git asked anew, a failed generation is an
// ErrorOccurred condition that changes nothing, and delete removes every
// app before the set ends.
func TestAppSetWorkflow(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(New(Config{}).ApplicationSet, workflow.RegisterOptions{Name: contract.AppSetWorkflow})
	generated := [][]string{{"a", "b"}, nil, {"a"}}
	var gens []contract.GenerateInput
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.GenerateInput) (contract.GenerateResult, error) {
		gens = append(gens, in)
		names := generated[min(len(gens), len(generated))-1]
		if names == nil {
			return contract.GenerateResult{}, temporal.NewNonRetryableApplicationError("bad template", contract.ErrInvalidAppSet, nil)
		}
		return contract.GenerateResult{Apps: named(names...)}, nil
	}, activity.RegisterOptions{Name: contract.ActivityGenerateAppSet})
	var recs []contract.ReconcileInput
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.ReconcileInput) (contract.ReconcileResult, error) {
		recs = append(recs, in)
		var out contract.ReconcileResult
		for _, a := range in.Apps {
			out.Apps = append(out.Apps, contract.AppSetApp{Name: a.Metadata.Name, Action: contract.AppCreated, Sync: app.SyncStatusSynced, Health: app.HealthHealthy})
			out.Owned = append(out.Owned, a.Metadata.Name)
		}
		return out, nil
	}, activity.RegisterOptions{Name: contract.ActivityReconcileAppSet})

	view := func() contract.AppSetView {
		res, err := env.QueryWorkflow(contract.QueryStatus)
		require.NoError(t, err)
		var v contract.AppSetView
		require.NoError(t, res.Get(&v))
		return v
	}
	cond := func(v contract.AppSetView, typ string) contract.AppSetCondition {
		for _, c := range v.Status.Conditions {
			if c.Type == typ {
				return c
			}
		}
		return contract.AppSetCondition{}
	}
	env.RegisterDelayedCallback(func() {
		v := view()
		require.Len(t, v.Status.Resources, 2)
		require.Equal(t, "True", cond(v, contract.AppSetResourcesUpToDate).Status)
		// Argo CD's messages and reasons.
		require.Equal(t, contract.AppSetCondition{Type: contract.AppSetResourcesUpToDate, Status: "True", Reason: "ApplicationSetUpToDate",
			Message: "All applications have been generated successfully"}, withoutTime(cond(v, contract.AppSetResourcesUpToDate)))
		require.Equal(t, contract.AppSetCondition{Type: contract.AppSetErrorOccurred, Status: "False", Reason: "ApplicationSetUpToDate",
			Message: "All applications have been generated successfully"}, withoutTime(cond(v, contract.AppSetErrorOccurred)))
		require.Equal(t, contract.AppSetCondition{Type: contract.AppSetParametersGenerated, Status: "True", Reason: "ParametersGenerated",
			Message: "Successfully generated parameters for all Applications"}, withoutTime(cond(v, contract.AppSetParametersGenerated)))
		env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		v := view()
		require.Equal(t, "True", cond(v, contract.AppSetErrorOccurred).Status)
		require.Equal(t, "bad template", cond(v, contract.AppSetErrorOccurred).Message)
		require.Equal(t, "ApplicationGenerationFromParamsError", cond(v, contract.AppSetErrorOccurred).Reason)
		require.Equal(t, contract.AppSetCondition{Type: contract.AppSetParametersGenerated, Status: "False", Reason: "ErrorOccurred", Message: "bad template"},
			withoutTime(cond(v, contract.AppSetParametersGenerated)))
		require.Len(t, v.Status.Resources, 2, "a failed generation changes nothing")
		env.SignalWorkflow(contract.SignalRefresh, contract.RefreshRequest{})
	}, 2*time.Second)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateAppSetDelete, "del", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("delete refused: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(_ any, err error) { require.NoError(t, err) },
		}, contract.DeleteAppSetRequest{})
	}, 3*time.Second)
	env.ExecuteWorkflow(contract.AppSetWorkflow, AppSetInput{ApplicationSet: *testAppSet(t)})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	require.Len(t, gens, 3)
	require.False(t, gens[0].Fresh)
	require.True(t, gens[1].Fresh, "a refresh asks Git anew")
	require.Len(t, recs, 3)
	require.Empty(t, recs[0].Previous)
	require.Equal(t, []string{"a", "b"}, recs[1].Previous, "the apps it created are its own")
	require.Len(t, recs[1].Apps, 1)
	require.True(t, recs[2].DeleteAll)
	require.Equal(t, appset.PolicySync, recs[2].Policy, "the default policy deletes the apps with the set")
	require.Equal(t, []string{"a"}, recs[2].Previous)
}

func withoutTime(c contract.AppSetCondition) contract.AppSetCondition {
	c.LastTransitionTime = time.Time{}
	return c
}
