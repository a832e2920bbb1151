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
	env.RegisterWorkflowWithOptions(New(Config{}).ApplicationSet, workflow.RegisterOptions{Name: AppSetWorkflow})
	generated := [][]string{{"a", "b"}, nil, {"a"}}
	var gens []GenerateInput
	env.RegisterActivityWithOptions(func(_ context.Context, in GenerateInput) (GenerateResult, error) {
		gens = append(gens, in)
		names := generated[min(len(gens), len(generated))-1]
		if names == nil {
			return GenerateResult{}, temporal.NewNonRetryableApplicationError("bad template", ErrInvalidAppSet, nil)
		}
		return GenerateResult{Apps: named(names...)}, nil
	}, activity.RegisterOptions{Name: ActivityGenerateAppSet})
	var recs []ReconcileInput
	env.RegisterActivityWithOptions(func(_ context.Context, in ReconcileInput) (ReconcileResult, error) {
		recs = append(recs, in)
		var out ReconcileResult
		for _, a := range in.Apps {
			out.Apps = append(out.Apps, AppSetApp{Name: a.Metadata.Name, Action: AppCreated, Sync: app.SyncStatusSynced, Health: app.HealthHealthy})
			out.Owned = append(out.Owned, a.Metadata.Name)
		}
		return out, nil
	}, activity.RegisterOptions{Name: ActivityReconcileAppSet})

	view := func() AppSetView {
		res, err := env.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		var v AppSetView
		require.NoError(t, res.Get(&v))
		return v
	}
	cond := func(v AppSetView, typ string) AppSetCondition {
		for _, c := range v.Status.Conditions {
			if c.Type == typ {
				return c
			}
		}
		return AppSetCondition{}
	}
	env.RegisterDelayedCallback(func() {
		v := view()
		require.Len(t, v.Status.Resources, 2)
		require.Equal(t, "True", cond(v, AppSetResourcesUpToDate).Status)
		// Argo CD's messages and reasons.
		require.Equal(t, AppSetCondition{Type: AppSetResourcesUpToDate, Status: "True", Reason: "ApplicationSetUpToDate",
			Message: "All applications have been generated successfully"}, withoutTime(cond(v, AppSetResourcesUpToDate)))
		require.Equal(t, AppSetCondition{Type: AppSetErrorOccurred, Status: "False", Reason: "ApplicationSetUpToDate",
			Message: "All applications have been generated successfully"}, withoutTime(cond(v, AppSetErrorOccurred)))
		require.Equal(t, AppSetCondition{Type: AppSetParametersGenerated, Status: "True", Reason: "ParametersGenerated",
			Message: "Successfully generated parameters for all Applications"}, withoutTime(cond(v, AppSetParametersGenerated)))
		env.SignalWorkflow(SignalRefresh, RefreshRequest{})
	}, time.Second)
	env.RegisterDelayedCallback(func() {
		v := view()
		require.Equal(t, "True", cond(v, AppSetErrorOccurred).Status)
		require.Equal(t, "bad template", cond(v, AppSetErrorOccurred).Message)
		require.Equal(t, "ApplicationGenerationFromParamsError", cond(v, AppSetErrorOccurred).Reason)
		require.Equal(t, AppSetCondition{Type: AppSetParametersGenerated, Status: "False", Reason: "ErrorOccurred", Message: "bad template"},
			withoutTime(cond(v, AppSetParametersGenerated)))
		require.Len(t, v.Status.Resources, 2, "a failed generation changes nothing")
		env.SignalWorkflow(SignalRefresh, RefreshRequest{})
	}, 2*time.Second)
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(UpdateAppSetDelete, "del", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("delete refused: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(_ any, err error) { require.NoError(t, err) },
		}, DeleteAppSetRequest{})
	}, 3*time.Second)
	env.ExecuteWorkflow(AppSetWorkflow, appSetInput{ApplicationSet: *testAppSet(t)})
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

func withoutTime(c AppSetCondition) AppSetCondition {
	c.LastTransitionTime = time.Time{}
	return c
}
