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
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
)

// TestPullRequestSetPollsEvery30Minutes: a set whose generator is a pull
// request one runs it every 30 minutes, as Argo CD requeues it, not at
// the 3 minutes of the other sets.
func TestPullRequestSetPollsEvery30Minutes(t *testing.T) {
	set, err := appset.Read([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: previews}
spec:
  generators: [{pullRequest: {github: {owner: acme, repo: shop}}}]
  template:
    metadata: {name: 'pr-{{number}}'}
    spec: {source: {repoURL: 'https://git.example.com/r.git', path: x}, destination: {name: us-east-1, namespace: 'pr-{{number}}'}}
`))
	require.NoError(t, err)
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(New(Config{}).ApplicationSet, workflow.RegisterOptions{Name: contract.AppSetWorkflow})
	var gens []time.Time
	env.RegisterActivityWithOptions(func(context.Context, contract.GenerateInput) (contract.GenerateResult, error) {
		gens = append(gens, env.Now())
		return contract.GenerateResult{Apps: named("pr-7")}, nil
	}, activity.RegisterOptions{Name: contract.ActivityGenerateAppSet})
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.ReconcileInput) (contract.ReconcileResult, error) {
		if in.DeleteAll {
			return contract.ReconcileResult{}, nil
		}
		return contract.ReconcileResult{Owned: []string{"pr-7"},
			Apps: []contract.AppSetApp{{Name: "pr-7", Action: contract.AppUnchanged, Sync: app.SyncStatusSynced, Health: app.HealthHealthy}}}, nil
	}, activity.RegisterOptions{Name: contract.ActivityReconcileAppSet})
	env.RegisterDelayedCallback(func() {
		require.Len(t, gens, 1, "no generation between the first and 30 minutes later")
	}, 29*time.Minute)
	env.RegisterDelayedCallback(func() {
		require.Len(t, gens, 2, "the second generation 30 minutes after the first")
		env.UpdateWorkflow(contract.UpdateAppSetDelete, "del", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("delete refused: %v", err) }, OnAccept: func() {},
			OnComplete: func(_ any, err error) { require.NoError(t, err) },
		}, contract.DeleteAppSetRequest{})
	}, 31*time.Minute)
	env.ExecuteWorkflow(contract.AppSetWorkflow, AppSetInput{ApplicationSet: *set})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, 30*time.Minute, gens[1].Sub(gens[0]).Round(time.Minute))
}
