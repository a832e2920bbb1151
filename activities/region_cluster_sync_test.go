package activities

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestPrune: an object Git no longer has shows OutOfSync and requires
// pruning; a sync without prune keeps it, one with prune deletes it.
func TestPrune(t *testing.T) {
	rt := newRegionTest(t)
	a, b := kobj("v1 ConfigMap shop/a", "k=1"), kobj("v1 ConfigMap shop/b", "k=2")
	_, err := rt.sync(contract.SyncInput{}, false, a, b)
	require.NoError(t, err)
	require.Len(t, rt.inventory, 2)

	cmp, err := rt.compare(contract.CompareInput{}, a)
	require.NoError(t, err)
	assert.Equal(t, app.SyncStatusSynced, statusOf(t, cmp.Resources, "a").Status)
	st := statusOf(t, cmp.Resources, "b")
	assert.Equal(t, app.SyncStatusOutOfSync, st.Status)
	assert.True(t, st.RequiresPruning)
	assert.Equal(t, "no longer desired: a sync with prune deletes it", st.Message)

	out, err := rt.sync(contract.SyncInput{}, false, a)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ConfigMap/a": "unchanged: "}, actions(out.Results), "nothing pruned")
	assert.True(t, statusOf(t, out.Resources, "b").RequiresPruning, "still shown as to prune")
	assert.NotNil(t, rt.api.live(t, "ConfigMap", "shop", "b"), "kept")

	out, err = rt.sync(contract.SyncInput{Prune: true}, false, a)
	require.NoError(t, err)
	assert.Nil(t, out.Failure)
	assert.Equal(t, "pruned: ", actions(out.Results)["ConfigMap/b"])
	assert.Nil(t, rt.api.live(t, "ConfigMap", "shop", "b"), "deleted")
	assert.Len(t, out.Resources, 1, "the region's state after shows it gone")
}

// TestRefusedByProject: a kind the app's project does not permit is
// refused by name before anything is written; a compare shows it Unknown
// with the project's rule.
func TestRefusedByProject(t *testing.T) {
	rt := newRegionTest(t)
	rt.useShopProject()
	rt.api.written()
	objs := []*unstructured.Unstructured{kobj("v1 ConfigMap shop/a", "k=1"), kobj("rbac.authorization.k8s.io/v1 ClusterRole reader")}

	cmp, err := rt.compare(contract.CompareInput{Project: "team"}, objs...)
	require.NoError(t, err)
	assert.Equal(t, app.SyncStatusOutOfSync, statusOf(t, cmp.Resources, "a").Status, "permitted: missing")
	var role app.ResourceStatus
	for _, r := range cmp.Resources {
		if r.Kind == "ClusterRole" {
			role = r
		}
	}
	assert.Equal(t, app.SyncStatusUnknown, role.Status)
	assert.Contains(t, role.Message, "cluster-scoped kind ClusterRole is not allowed (clusterResourceWhitelist)")

	_, err = rt.sync(contract.SyncInput{}, false, objs...)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, contract.ErrProjectDenied, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	assert.Contains(t, appErr.Error(), "ClusterRole.rbac.authorization.k8s.io reader: cluster-scoped kind ClusterRole is not allowed (clusterResourceWhitelist)")
	assert.Contains(t, appErr.Error(), `project "team"`)
	assert.Empty(t, rt.api.written(), "nothing was written")
}

// TestHookBetweenWaves: a Sync hook of wave 0 runs once the wave-0
// objects are applied, and the wave-1 object is applied after it.
func TestHookBetweenWaves(t *testing.T) {
	rt := newRegionTest(t)
	first := kobj("v1 ConfigMap shop/first", "k=1", "annotation:"+app.AnnotationSyncWave+"=0")
	hook := kobj("batch/v1 Job shop/migrate", "annotation:"+app.AnnotationHook+"=Sync")
	hook.Object["spec"] = map[string]any{"template": map[string]any{"spec": map[string]any{
		"restartPolicy": "Never", "containers": []any{map[string]any{"name": "m", "image": "migrate"}}}}}
	second := kobj("v1 ConfigMap shop/second", "k=2", "annotation:"+app.AnnotationSyncWave+"=1")
	rt.api.written()

	out, err := rt.sync(contract.SyncInput{}, true, second, hook, first)
	require.NoError(t, err)
	require.Nil(t, out.Failure)
	require.Len(t, out.Hooks, 1)
	assert.Equal(t, "Succeeded", out.Hooks[0].Status, out.Hooks[0].Message)
	assert.Equal(t, string(app.HookTypeSync), out.Hooks[0].Phase)
	assert.Equal(t, map[string]string{"ConfigMap/first": "created: ", "ConfigMap/second": "created: "}, actions(out.Results),
		"the hook is a hook result, not a resource result")
	writes := rt.api.written()
	require.Len(t, writes, 3, "%v", writes)
	assert.Equal(t, "patch ConfigMap/shop/first", writes[0])
	assert.Regexp(t, `^create Job/shop/migrate`, writes[1])
	assert.Equal(t, "patch ConfigMap/shop/second", writes[2])
}

// TestPruneRefusedByProject: an object its project no longer permits (a
// project narrowed since it was applied) is not pruned, and the sync says
// why, by name.
func TestPruneRefusedByProject(t *testing.T) {
	rt := newRegionTest(t)
	p := rt.useShopProject()
	sa, b := kobj("v1 ServiceAccount shop/runner"), kobj("v1 ConfigMap shop/b", "k=2")
	_, err := rt.sync(contract.SyncInput{}, false, sa, b)
	require.NoError(t, err)
	require.NotNil(t, rt.api.live(t, "ConfigMap", "shop", "b"))

	p.Spec.NamespaceResourceBlacklist = []app.GroupKind{{Kind: "ConfigMap"}}
	_, err = rt.sync(contract.SyncInput{Prune: true}, false, sa)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, contract.ErrProjectDenied, appErr.Type())
	assert.Contains(t, appErr.Error(), "prune refused")
	assert.Contains(t, appErr.Error(), `project "team" does not allow ConfigMap shop/b: namespaced kind ConfigMap is not allowed (namespaceResourceBlacklist)`)
	assert.Contains(t, appErr.Error(), "nothing was pruned there, and what the sync applied stays", "the sync's objects were applied before the prune")
	assert.NotContains(t, appErr.Error(), "nothing of this sync was applied")
	assert.NotNil(t, rt.api.live(t, "ConfigMap", "shop", "b"), "not pruned")
}

// useShopProject gives the app project "team": any repository, namespace
// shop of the test region, and no cluster-scoped kinds. A test may narrow
// the project it returns.
func (rt *regionTest) useShopProject() *app.AppProject {
	p := &app.AppProject{Spec: app.ProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []app.ProjectDestination{{Name: testRegion, Namespace: "shop"}},
	}}
	p.Metadata.Name = "team"
	rt.projects = fakeProjects{p: p}
	rt.restart()
	return p
}
