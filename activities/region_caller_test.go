package activities

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// busyApp is an app whose workflow does not answer in time (a backlog of
// workflow tasks), in a fleet of projects that do.
type busyApp struct {
	slowProjects
	projects map[string]*app.AppProject
}

func (b busyApp) Project(_ context.Context, name string) (*app.AppProject, error) {
	if p, ok := b.projects[name]; ok {
		return p, nil
	}
	return nil, &contract.ProjectNotFoundError{Name: name}
}

// syncFrom runs a Sync of objs as the workflow of ID id and type typ
// schedules it, naming project in its input.
func (rt *regionTest) syncFrom(id, typ, project string, objs ...*unstructured.Unstructured) error {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivityWithOptions(rt.region.Sync, activity.RegisterOptions{Name: contract.ActivitySync})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in contract.SyncInput) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		return workflow.ExecuteActivity(ctx, contract.ActivitySync, in).Get(ctx, nil)
	}, workflow.RegisterOptions{Name: typ})
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: id})
	env.ExecuteWorkflow(typ, contract.SyncInput{Target: rt.target(objs...), Region: testRegion, Namespace: "shop",
		OperationID: "op-1", Project: project})
	return env.GetWorkflowError()
}

// TestSyncOfTheAppsOwnWorkflowDoesNotAskIt: while the app's workflow
// cannot answer a query, a sync that very workflow scheduled is checked
// against the project its input names, read by name: allowed where that
// project allows, refused where it does not, and a project that does not
// exist permits nothing. A sync scheduled by any other workflow, or
// without a project in its input, asks the app's workflow, and waits for
// its answer.
func TestSyncOfTheAppsOwnWorkflowDoesNotAskIt(t *testing.T) {
	rt := newRegionTest(t)
	team := &app.AppProject{Spec: app.ProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []app.ProjectDestination{{Name: "*", Namespace: "shop"}},
	}}
	team.Metadata.Name = "team"
	rt.projects = busyApp{projects: map[string]*app.AppProject{"team": team}}
	rt.restart()
	own, typ := contract.WorkflowID("shop"), contract.ApplicationWorkflow

	require.NoError(t, rt.syncFrom(own, typ, "team", kobj("v1 ConfigMap shop/a", "k=1")))
	assert.NotNil(t, rt.api.live(t, "ConfigMap", "shop", "a"), "applied as project team allows")

	rt.api.written()
	err := rt.syncFrom(own, typ, "team", kobj("v1 ConfigMap kube-system/b", "k=1"))
	requireDenied(t, rt, err, `project "team" does not allow ConfigMap kube-system/b`)

	err = rt.syncFrom(own, typ, "gone", kobj("v1 ConfigMap shop/c", "k=1"))
	requireDenied(t, rt, err, `app "shop"`, `"gone"`)

	for name, from := range map[string][3]string{
		"another workflow":             {"app/other", typ, "team"},
		"a workflow of another type":   {own, contract.PostSyncWorkflow, "team"},
		"an input without its project": {own, typ, ""},
	} {
		err := rt.syncFrom(from[0], from[1], from[2], kobj("v1 ConfigMap shop/d", "k=1"))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "ask its workflow for its project", name)
		assert.Empty(t, rt.api.written(), name)
	}
}
