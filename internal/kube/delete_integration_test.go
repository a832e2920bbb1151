package kube_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

func TestDeleteAll(t *testing.T) {
	e := newEnv(t)
	objs := append(guestbook(t), configMap("settings", nil, nil))
	cs, err := e.apply(objs, nil)
	require.NoError(t, err)
	applied := keys(cs)
	require.Len(t, applied, 3)

	untracked := configMap("untracked", map[string]string{kube.LabelApp: e.ns}, nil)
	_, err = e.dyn.Resource(configMaps).Namespace(e.ns).Create(e.ctx, untracked, metav1.CreateOptions{})
	require.NoError(t, err)

	deleted, err := e.cluster.DeleteAll(e.ctx, e.ns, "")
	require.NoError(t, err)
	assert.ElementsMatch(t, applied, deleted)
	e.eventually("every object of the app to be gone", func() bool {
		left, err := e.cluster.Remaining(e.ctx, e.ns, applied)
		require.NoError(t, err)
		return len(left) == 0
	})
	assert.True(t, e.exists(configMaps, "untracked"))

	deleted, err = e.cluster.DeleteAll(e.ctx, e.ns, "")
	require.NoError(t, err)
	assert.Empty(t, deleted, "nothing left to delete")
}

func TestDeleteKeys(t *testing.T) {
	e := newEnv(t)
	cs, err := e.apply(guestbook(t), nil)
	require.NoError(t, err)
	svc := app.ResourceKey{Version: "v1", Kind: "Service", Namespace: e.ns, Name: "guestbook-ui"}
	missing := app.ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: e.ns, Name: "never-applied"}

	deleted, err := e.cluster.Delete(e.ctx, e.ns, []app.ResourceKey{svc, missing})
	require.NoError(t, err)
	assert.Equal(t, []app.ResourceKey{svc}, deleted)
	e.eventually("the Service to be gone", func() bool { return !e.exists(services, "guestbook-ui") })

	left, err := e.cluster.Remaining(e.ctx, e.ns, keys(cs))
	require.NoError(t, err)
	assert.Equal(t, []string{"Deployment"}, kindsOf(left))

	// Another app cannot delete what is not its own.
	deleted, err = e.cluster.Delete(e.ctx, "someone-else", keys(cs))
	require.NoError(t, err)
	assert.Empty(t, deleted)
	assert.True(t, e.exists(deployments, "guestbook-ui"))
}

func TestCRDAndCustomResourceInOneApply(t *testing.T) {
	e := newEnv(t)
	group := e.ns + ".ferry.test"
	crd := decode(t, fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`, group))
	widget := decode(t, fmt.Sprintf(`
apiVersion: %s/v1
kind: Widget
metadata: {name: w}
spec: {size: 3}
`, group))
	// The custom resource comes first: order must not depend on the input's.
	objs := []*unstructured.Unstructured{widget, crd}
	cs, err := e.apply(objs, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"CustomResourceDefinition/widgets." + group: "created", "Widget/w": "created"}, actions(cs))
	assert.Equal(t, "", cs.Entries[0].Key.Namespace, "a cluster-scoped object keeps no namespace")
	assert.Equal(t, e.ns, cs.Entries[1].Key.Namespace)

	states := e.compare(objs, nil)
	assert.Equal(t, map[string]app.SyncStatusCode{"CustomResourceDefinition/widgets." + group: "Synced", "Widget/w": "Synced"}, syncs(states))

	deleted, err := e.cluster.DeleteAll(e.ctx, e.ns, "",
		schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"},
		schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	require.NoError(t, err)
	assert.Len(t, deleted, 2)
}

func kindsOf(keys []app.ResourceKey) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.Kind)
	}
	return out
}

// TestDeleteAllForeground: with foreground propagation (Argo CD's resources
// finalizer) an object goes only once what it owns has gone, and Remaining
// counts it until then; with background it goes at once.
func TestDeleteAllForeground(t *testing.T) {
	e := newEnv(t)
	const hold = "ferry.dev/test-hold"
	// owned makes a ConfigMap owned by parent, held by a finalizer until
	// release.
	owned := func(name string, parent *unstructured.Unstructured) {
		child := configMap(name, nil, nil)
		yes := true
		child.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: parent.GetName(), UID: parent.GetUID(), BlockOwnerDeletion: &yes}})
		child.SetFinalizers([]string{hold})
		_, err := e.dyn.Resource(configMaps).Namespace(e.ns).Create(e.ctx, child, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	release := func(name string) {
		_, err := e.dyn.Resource(configMaps).Namespace(e.ns).Patch(e.ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	background := e.ns + "-bg"
	_, err := e.apply([]*unstructured.Unstructured{configMap("fg", nil, nil)}, nil)
	require.NoError(t, err)
	_, err = e.apply([]*unstructured.Unstructured{configMap("bg", nil, nil)}, func(r *kube.ApplyRequest) { r.App = background })
	require.NoError(t, err)
	owned("fg-child", e.get(configMaps, "fg"))
	owned("bg-child", e.get(configMaps, "bg"))
	defer release("bg-child")

	deleted, err := e.cluster.DeleteAll(e.ctx, background, "")
	require.NoError(t, err)
	assert.Len(t, deleted, 1)
	assert.False(t, e.exists(configMaps, "bg"), "background: gone at once, before what it owns")

	deleted, err = e.cluster.DeleteAll(e.ctx, e.ns, app.PropagationForeground)
	require.NoError(t, err)
	assert.Len(t, deleted, 1)
	live := e.get(configMaps, "fg")
	assert.NotNil(t, live.GetDeletionTimestamp())
	assert.Contains(t, live.GetFinalizers(), metav1.FinalizerDeleteDependents, "foreground: it waits for what it owns")
	left, err := e.cluster.Remaining(e.ctx, e.ns, deleted)
	require.NoError(t, err)
	assert.Len(t, left, 1, "Remaining counts it while what it owns is there")

	release("fg-child")
	e.eventually("the foreground delete to finish", func() bool {
		left, err := e.cluster.Remaining(e.ctx, e.ns, deleted)
		require.NoError(t, err)
		return len(left) == 0
	})
	assert.False(t, e.exists(configMaps, "fg-child"))
}

// TestDeleteAllLeavesExcludedKinds: a cluster whose resource.exclusions
// leave ConfigMaps alone deletes the app's other objects and not its
// ConfigMap, applied before the kind was excluded.
func TestDeleteAllLeavesExcludedKinds(t *testing.T) {
	e := newEnv(t)
	cs, err := e.apply(append(guestbook(t), configMap("settings", nil, nil)), nil)
	require.NoError(t, err)
	cfg, err := kube.LoadConfig(stack.Kubeconfig, region)
	require.NoError(t, err)
	opts := kube.DefaultOptions()
	opts.Excluded = func(group, kind string) bool { return group == "" && kind == "ConfigMap" }
	excluding, err := kube.NewClusterWithOptions(cfg, opts)
	require.NoError(t, err)

	deleted, err := excluding.DeleteAll(e.ctx, e.ns, "")
	require.NoError(t, err)
	var want []app.ResourceKey
	for _, k := range keys(cs) {
		if k.Kind != "ConfigMap" {
			want = append(want, k)
		}
	}
	require.Len(t, want, 2)
	assert.ElementsMatch(t, want, deleted)
	assert.True(t, e.exists(configMaps, "settings"), "the excluded ConfigMap stays")
}
