package workflows

import (
	"context"
	"sync"
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

// TestAppSetRollingSyncWorkflow: a RollingSync set starts the syncs of
// step 2 only once step 1's apps are Healthy, says so in its
// RolloutProgressing condition, and ends the rollout complete.
func TestAppSetRollingSyncWorkflow(t *testing.T) {
	set, err := appset.Read([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: rs}
spec:
  generators: [{list: {elements: [{app: a1, env: dev}, {app: a2, env: dev}, {app: b1, env: prod}]}}]
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [prod]}]
  template:
    metadata: {name: '{{app}}', labels: {env: '{{env}}'}}
    spec: {source: {repoURL: 'https://git.example.com/r.git', path: '{{app}}'}, destination: {name: us-east-1, namespace: x}}
`))
	require.NoError(t, err)
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(New(Config{}).ApplicationSet, workflow.RegisterOptions{Name: contract.AppSetWorkflow})
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.GenerateInput) (contract.GenerateResult, error) {
		res, err := appset.Generate(context.Background(), &in.Set, appset.Options{})
		return contract.GenerateResult{Apps: res.Apps}, err
	}, activity.RegisterOptions{Name: contract.ActivityGenerateAppSet})
	var mu sync.Mutex
	world := map[string]*contract.AppSetApp{}
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.ReconcileInput) (contract.ReconcileResult, error) {
		mu.Lock()
		defer mu.Unlock()
		var out contract.ReconcileResult
		for _, a := range in.Apps {
			row, ok := world[a.Metadata.Name]
			if !ok {
				now := env.Now()
				row = &contract.AppSetApp{Name: a.Metadata.Name, Sync: app.SyncStatusOutOfSync, Health: app.HealthMissing, Revision: "sha1", ReconciledAt: &now}
				world[row.Name] = row
				out.Apps = append(out.Apps, contract.AppSetApp{Name: row.Name, Action: contract.AppCreated})
			} else {
				r := *row
				r.Action = contract.AppUnchanged
				out.Apps = append(out.Apps, r)
			}
			out.Owned = append(out.Owned, a.Metadata.Name)
		}
		return out, nil
	}, activity.RegisterOptions{Name: contract.ActivityReconcileAppSet})
	var syncs [][]string
	healthyWhenB1Synced := true
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.SyncAppSetAppsInput) (contract.SyncAppSetAppsResult, error) {
		mu.Lock()
		defer mu.Unlock()
		var names []string
		for _, s := range in.Apps {
			if st := world[s.Name].OpStartedAt; st != nil && st.After(s.Since) {
				continue // started already, as SyncAppSetApps skips it
			}
			names = append(names, s.Name)
			if s.Name == "b1" {
				healthyWhenB1Synced = world["a1"].Health == app.HealthHealthy && world["a2"].Health == app.HealthHealthy
			}
			started, done := env.Now().Add(time.Millisecond), env.Now().Add(time.Second)
			*world[s.Name] = contract.AppSetApp{Name: s.Name, Sync: app.SyncStatusSynced, Health: app.HealthHealthy, Revision: "sha1",
				ReconciledAt: &done, OpStartedAt: &started, OpPhase: app.OperationSucceeded}
		}
		if len(names) > 0 {
			syncs = append(syncs, names)
		}
		return contract.SyncAppSetAppsResult{}, nil
	}, activity.RegisterOptions{Name: contract.ActivitySyncAppSetApps})

	var final contract.AppSetView
	env.RegisterDelayedCallback(func() {
		res, err := env.QueryWorkflow(contract.QueryStatus)
		require.NoError(t, err)
		require.NoError(t, res.Get(&final))
		env.CancelWorkflow()
	}, 2*time.Minute)
	env.ExecuteWorkflow(contract.AppSetWorkflow, AppSetInput{ApplicationSet: *set})

	require.Equal(t, [][]string{{"a1", "a2"}, {"b1"}}, syncs, "step 2 syncs after step 1")
	require.True(t, healthyWhenB1Synced, "step 1 was Healthy when step 2 began")
	var cond contract.AppSetCondition
	for _, c := range final.Status.Conditions {
		if c.Type == contract.AppSetRolloutProgressing {
			cond = c
		}
	}
	require.Equal(t, "False", cond.Status, "%+v", final.Status)
	require.Equal(t, "ApplicationSet Rollout has completed", cond.Message)
	require.Len(t, final.Status.ApplicationStatus, 3)
	for _, st := range final.Status.ApplicationStatus {
		require.Equal(t, appset.ProgressiveHealthy, st.Status, "%+v", st)
	}
}
