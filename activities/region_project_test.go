package activities

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// requireDenied asserts a sync refused by the app's project, for good,
// with nothing written.
func requireDenied(t *testing.T, rt *regionTest, err error, says ...string) {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, contract.ErrProjectDenied, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	for _, s := range says {
		assert.Contains(t, appErr.Error(), s)
	}
	assert.Empty(t, rt.api.written(), "nothing was written")
}

// TestDefaultProjectObjectIsEnforced: an app of the default project obeys
// an applied AppProject named default, which allows namespace team-a only:
// its ConfigMap in shop is refused before anything is written, and a
// compare (whose input names no project) shows why. The built-in default
// project allows it.
func TestDefaultProjectObjectIsEnforced(t *testing.T) {
	rt := newRegionTest(t)
	cm := kobj("v1 ConfigMap shop/a", "k=1")

	rt.projects = fakeProjects{p: app.DefaultAppProject()}
	rt.restart()
	_, err := rt.sync(contract.SyncInput{}, false, cm)
	require.NoError(t, err, "the built-in default project allows everything")

	locked := &app.AppProject{Spec: app.ProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []app.ProjectDestination{{Name: "*", Namespace: "team-a"}},
	}}
	locked.Metadata.Name = app.DefaultProject
	rt.projects = fakeProjects{p: locked}
	rt.restart()
	rt.api.written()
	_, err = rt.sync(contract.SyncInput{}, false, kobj("v1 ConfigMap shop/b", "k=2"))
	requireDenied(t, rt, err, `project "default" does not allow ConfigMap shop/b: namespace shop of region us-east-1 is not a destination (destinations)`)

	out, err := rt.compare(contract.CompareInput{}, kobj("v1 ConfigMap shop/b", "k=2"))
	require.NoError(t, err)
	assert.Equal(t, app.SyncStatusUnknown, statusOf(t, out.Resources, "b").Status)
	assert.Contains(t, statusOf(t, out.Resources, "b").Message, "(destinations)")
}

// TestPermitOnlyProjectScopedClusters: with permitOnlyProjectScopedClusters
// the app syncs only to a region scoped to its project; in another, nothing
// is written, and the error names the project, the region and the fix.
func TestPermitOnlyProjectScopedClusters(t *testing.T) {
	rt := newRegionTest(t)
	p := rt.useShopProject()
	p.Spec.PermitOnlyProjectScopedClusters = true
	scopedTo := func(project string) {
		rc, err := regions.New([]regions.Region{{Name: testRegion, Project: project}})
		require.NoError(t, err)
		rt.restart()
		rt.region.Regions = rc
		rt.api.written()
	}
	objs := []*unstructured.Unstructured{kobj("v1 ConfigMap shop/a", "k=1")}

	scopedTo("other")
	_, err := rt.sync(contract.SyncInput{}, false, objs...)
	requireDenied(t, rt, err, `project "team" does not allow ConfigMap shop/a`, "region us-east-1 is not scoped to project \"team\"",
		"set project: team on region us-east-1 in the regions configuration", "(permitOnlyProjectScopedClusters)")

	scopedTo("team")
	out, err := rt.sync(contract.SyncInput{}, false, objs...)
	require.NoError(t, err)
	assert.Nil(t, out.Failure)
	assert.NotNil(t, rt.api.live(t, "ConfigMap", "shop", "a"), "applied in the region scoped to the project")
}

// slowProjects is a project source whose app's workflow does not answer
// in time, as under a workflow-task backlog.
type slowProjects struct{ fakeProjects }

func (slowProjects) AppProject(context.Context, string) (*app.Application, *app.AppProject, error) {
	// What the Temporal client's query returns when the workflow task
	// that answers it does not run in time.
	return nil, nil, fmt.Errorf("app %q: ask its workflow for its project: %w", "shop", serviceerror.NewDeadlineExceeded("context deadline exceeded"))
}

// TestCompareRetriedWhenTheProjectDoesNotAnswer: a compare whose dry runs
// cannot learn who they write as, because the app's workflow did not
// answer in time, fails to be tried again, rather than call the app's
// objects Unknown until the next poll.
func TestCompareRetriedWhenTheProjectDoesNotAnswer(t *testing.T) {
	rt := newRegionTest(t)
	_, err := rt.sync(contract.SyncInput{}, false, kobj("v1 ConfigMap shop/a", "k=1"))
	require.NoError(t, err)
	rt.projects = slowProjects{fakeProjects{p: app.DefaultAppProject()}}
	rt.restart() // a worker that never dry-ran the object: it must
	_, err = rt.compare(contract.CompareInput{}, kobj("v1 ConfigMap shop/a", "k=2"))
	require.Error(t, err)
	var ae *temporal.ApplicationError
	require.ErrorAs(t, err, &ae)
	assert.False(t, ae.NonRetryable(), "tried again: %v", err)
	assert.Contains(t, err.Error(), "ask its workflow for its project")
}
