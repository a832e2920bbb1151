package workflows

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

func testProject(repos ...string) *app.AppProject {
	return &app.AppProject{
		APIVersion: app.APIVersion, Kind: app.ProjectKind,
		Metadata: app.ObjectMeta{Name: "team-a"},
		Spec: app.ProjectSpec{
			SourceRepos:  repos,
			Destinations: []app.ProjectDestination{{Name: "us-east-1", Namespace: "team-a"}},
		},
	}
}

func newProjectEnv(t *testing.T, apps func() []string) *testsuite.TestWorkflowEnvironment {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(New(Config{}).AppProject, workflow.RegisterOptions{Name: contract.ProjectWorkflow})
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.ProjectAppsInput) (contract.ProjectAppsResult, error) {
		require.Equal(t, "team-a", in.Project)
		return contract.ProjectAppsResult{Apps: apps()}, nil
	}, activity.RegisterOptions{Name: contract.ActivityProjectApps})
	return env
}

func queryProject(t *testing.T, env *testsuite.TestWorkflowEnvironment) contract.ProjectView {
	t.Helper()
	res, err := env.QueryWorkflow(contract.QueryProject)
	require.NoError(t, err)
	var v contract.ProjectView
	require.NoError(t, res.Get(&v))
	return v
}

// A project holds its spec, takes a new one through the spec update (a bad
// one is refused by the validator and changes nothing), refuses to be
// deleted while an app uses it and ends once none does.
func TestProjectWorkflow(t *testing.T) {
	inUse := []string{"web"}
	env := newProjectEnv(t, func() []string { return inUse })
	first := testProject("https://git.example.com/a.git")
	second := testProject("https://git.example.com/b.git")
	step := func(d time.Duration, fn func()) { env.RegisterDelayedCallback(fn, d) }

	step(time.Second, func() {
		v := queryProject(t, env)
		require.Equal(t, []string{"https://git.example.com/a.git"}, v.Spec.SourceRepos)
		require.Equal(t, first.Digest(), v.Digest)
		raw := json.RawMessage(`{"apiVersion":"argoproj.io/v1alpha1","kind":"AppProject","metadata":{"name":"team-a"},"spec":{"roles":[{"name":"ci","policies":["p, proj:team-b:ci, applications, sync, team-b/*, allow"]}]}}`)
		env.UpdateWorkflow(contract.UpdateProjectSpec, "bad", &testsuite.TestUpdateCallback{
			OnReject: func(err error) {
				require.ErrorContains(t, err, `spec.roles[0].policies[0]: subject "proj:team-b:ci" is not this role: write proj:team-a:ci`)
			},
			OnAccept:   func() { t.Error("a role granting another project's apps was accepted") },
			OnComplete: func(any, error) {},
		}, raw)
		renamed := testProject()
		renamed.Metadata.Name = "team-b"
		env.UpdateWorkflow(contract.UpdateProjectSpec, "renamed", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { require.ErrorContains(t, err, "cannot be renamed") },
			OnAccept:   func() { t.Error("a renaming spec was accepted") },
			OnComplete: func(any, error) {},
		}, renamed)
		env.UpdateWorkflow(contract.UpdateProjectSpec, "good", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("good spec refused: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(res any, err error) { require.NoError(t, err) },
		}, second)
	})
	step(2*time.Second, func() {
		require.Equal(t, second.Digest(), queryProject(t, env).Digest)
		env.UpdateWorkflow(contract.UpdateProjectDelete, "delete-in-use", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("delete rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(_ any, err error) { require.ErrorContains(t, err, `project "team-a" is used by 1 app(s): web`) },
		})
	})
	step(3*time.Second, func() {
		require.False(t, env.IsWorkflowCompleted(), "a project in use was deleted")
		inUse = nil
		env.UpdateWorkflow(contract.UpdateProjectDelete, "delete", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("delete rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(_ any, err error) { require.NoError(t, err) },
		})
	})
	env.ExecuteWorkflow(contract.ProjectWorkflow, first)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
}

func TestProjectWorkflowRefusesInvalidInput(t *testing.T) {
	env := newProjectEnv(t, func() []string { return nil })
	p := testProject("")
	env.ExecuteWorkflow(contract.ProjectWorkflow, p)
	require.True(t, env.IsWorkflowCompleted())
	require.ErrorContains(t, env.GetWorkflowError(), "spec.sourceRepos[0]: empty")
}

// The default project's object is deleted whatever apps use it: they fall
// back to the built-in default project.
func TestDefaultProjectObjectDeletedWhileInUse(t *testing.T) {
	var ts testsuite.WorkflowTestSuite
	env := ts.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(New(Config{}).AppProject, workflow.RegisterOptions{Name: contract.ProjectWorkflow})
	env.RegisterActivityWithOptions(func(context.Context, contract.ProjectAppsInput) (contract.ProjectAppsResult, error) {
		return contract.ProjectAppsResult{Apps: []string{"web"}}, nil
	}, activity.RegisterOptions{Name: contract.ActivityProjectApps})
	p := testProject("*")
	p.Metadata.Name = app.DefaultProject
	env.RegisterDelayedCallback(func() {
		require.Equal(t, app.DefaultProject, queryProject(t, env).Metadata.Name)
		env.UpdateWorkflow(contract.UpdateProjectDelete, "delete", &testsuite.TestUpdateCallback{
			OnReject:   func(err error) { t.Errorf("delete rejected: %v", err) },
			OnAccept:   func() {},
			OnComplete: func(_ any, err error) { require.NoError(t, err) },
		})
	}, time.Second)
	env.ExecuteWorkflow(contract.ProjectWorkflow, p)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
}
