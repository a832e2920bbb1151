package kube_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

var (
	crds        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	replicaSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	jobs        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// TestWavesInOrder: a multi-wave app goes in wave by wave, each wave
// healthy before the next, kinds in order within a wave, the Namespace and
// the CRD moved to the first wave that needs them; the hook is left alone.
// The order is read from the API server's resourceVersions.
func TestWavesInOrder(t *testing.T) {
	e := newEnv(t)
	ns, group := e.ns+"-w", e.ns+".waves.test"
	t.Cleanup(func() {
		_ = e.dyn.Resource(namespaces).Delete(context.Background(), ns, metav1.DeleteOptions{})
		_ = e.dyn.Resource(crds).Delete(context.Background(), "widgets."+group, metav1.DeleteOptions{})
	})
	objs := fixture(t, "waves", "NS", ns, "GROUP", group)
	rec := e.record(e.ns, namespaces, configMaps, deployments, services, crds)
	var progress []kube.Progress
	cs, err := e.apply(objs, func(r *kube.ApplyRequest) { r.Progress = func(p kube.Progress) { progress = append(progress, p) } })
	require.NoError(t, err)

	var order []string
	waves := map[string]int{}
	for _, c := range cs.Entries {
		order = append(order, c.Key.Kind+"/"+c.Key.Name)
		waves[c.Key.Kind+"/"+c.Key.Name] = c.Wave
	}
	assert.Equal(t, []string{"Namespace/" + ns, "ConfigMap/settings", "Service/web", "Deployment/web",
		"CustomResourceDefinition/widgets." + group, "Widget/w", "ConfigMap/after"}, order, "the hook is not applied")
	assert.Equal(t, map[string]int{"Namespace/" + ns: -1, "ConfigMap/settings": -1, "Service/web": 0, "Deployment/web": 0,
		"CustomResourceDefinition/widgets." + group: 1, "Widget/w": 1, "ConfigMap/after": 2}, waves)

	// From the API server: creation order, and the health wait after wave 0.
	nsRV := rec.get(e, added, "Namespace/"+ns)
	settings := rec.get(e, added, "ConfigMap/settings")
	svc := rec.get(e, added, "Service/web")
	deploy := rec.get(e, added, "Deployment/web")
	deployHealthy := rec.get(e, healthy, "Deployment/web")
	crd := rec.get(e, added, "CustomResourceDefinition/widgets."+group)
	after := rec.get(e, added, "ConfigMap/after")
	widget, err := e.dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns).Get(e.ctx, "w", metav1.GetOptions{})
	require.NoError(t, err)
	widgetRV := rv(t, widget)
	assert.Less(t, nsRV, settings, "the Namespace first (wave 5 moved to -1)")
	assert.Less(t, settings, svc, "wave -1 before wave 0")
	assert.Less(t, svc, deploy, "Services before Deployments")
	assert.Less(t, deploy, deployHealthy)
	assert.Less(t, deployHealthy, crd, "wave 1 starts once wave 0 is healthy")
	assert.Less(t, crd, widgetRV, "the CRD (wave 3 moved to 1) before its custom resource")
	assert.Less(t, widgetRV, after, "wave 1 before wave 2")

	list, err := e.dyn.Resource(jobs).Namespace(ns).List(e.ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, list.Items, "hooks are the hook runner's")
	stages := map[string]bool{}
	for _, p := range progress {
		stages[p.Stage] = true
	}
	assert.True(t, stages["apply"] && stages["wait"], "progress reports applies and waits: %v", progress)

	states := e.compare(objs, nil)
	for _, s := range states {
		assert.Equal(t, app.SyncStatusSynced, s.Sync, "%s: %s", s.Key.Kind, s.Message)
	}
	assert.Len(t, states, 7, "the hook is not compared")
}

// TestPruneOrder: pruning goes from the highest wave down, PruneLast at the
// very end, and keeps Prune=false; PrunePropagationPolicy=orphan leaves
// the Deployment's ReplicaSet behind.
func TestPruneOrder(t *testing.T) {
	e := newEnv(t)
	withWave := func(name, wave, opts string) *unstructured.Unstructured {
		ann := map[string]string{"argocd.argoproj.io/sync-wave": wave}
		if opts != "" {
			ann[app.AnnotationSyncOptions] = opts
		}
		return configMap(name, nil, ann)
	}
	deploy := guestbookDeployment(t)
	deploy.SetAnnotations(map[string]string{app.AnnotationSyncOptions: "PrunePropagationPolicy=orphan"})
	objs := []*unstructured.Unstructured{
		withWave("w0", "0", ""), withWave("w1", "1", ""), withWave("w2", "2", ""),
		withWave("last", "5", "PruneLast=true"), withWave("keep", "3", "Prune=false"), deploy,
	}
	cs, err := e.apply(objs, nil)
	require.NoError(t, err)
	e.eventually("a ReplicaSet", func() bool { return len(e.replicaSets()) == 1 })

	rec := e.record(e.ns, configMaps, deployments)
	stay := configMap("stay", nil, nil)
	cs, err = e.apply([]*unstructured.Unstructured{stay}, func(r *kube.ApplyRequest) { r.Prune, r.Inventory = true, keys(cs) })
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ConfigMap/stay": "created", "ConfigMap/w0": "pruned", "ConfigMap/w1": "pruned",
		"ConfigMap/w2": "pruned", "ConfigMap/last": "pruned", "ConfigMap/keep": "skipped", "Deployment/guestbook-ui": "pruned"}, actions(cs))

	last := rec.get(e, deleted, "ConfigMap/last")
	w2, w1, w0 := rec.get(e, deleted, "ConfigMap/w2"), rec.get(e, deleted, "ConfigMap/w1"), rec.get(e, deleted, "ConfigMap/w0")
	d := rec.get(e, deleted, "Deployment/guestbook-ui")
	assert.Less(t, w2, w1)
	assert.Less(t, w1, w0)
	assert.Less(t, w1, d, "wave 1 is gone before wave 0 is pruned")
	assert.Less(t, w0, last, "PruneLast after every other prune")
	assert.Less(t, d, last)
	assert.True(t, e.exists(configMaps, "keep"), "Prune=false is never pruned")
	rs := e.replicaSets()
	require.Len(t, rs, 1, "orphan propagation leaves the ReplicaSet")
	assert.Empty(t, rs[0].GetOwnerReferences())
}

// TestFailedWaveStopsTheSync: an object the API server refuses fails the
// sync with its message; later waves are not applied and nothing is pruned.
// A Degraded object stops the sync the same way.
func TestFailedWaveStopsTheSync(t *testing.T) {
	e := newEnv(t)
	later := configMap("later", nil, map[string]string{"argocd.argoproj.io/sync-wave": "1"})
	bad := invalidDeployment(t)
	cs, err := e.apply([]*unstructured.Unstructured{bad, later}, nil)
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err))
	assert.Contains(t, err.Error(), "Deployment/"+e.ns+"/bad: apply: ")
	assert.Contains(t, err.Error(), "spec.replicas")
	assert.Equal(t, map[string]string{"Deployment/bad": "failed"}, actions(cs))
	assert.False(t, e.exists(configMaps, "later"))

	failing := decode(t, `
apiVersion: v1
kind: Pod
metadata: {name: failing, labels: {ferry.dev/fail: "true"}}
spec:
  restartPolicy: Never
  containers: [{name: c, image: busybox}]
`)
	cs, err = e.apply([]*unstructured.Unstructured{failing, later}, func(r *kube.ApplyRequest) { r.WaveTimeout = time.Minute })
	require.Error(t, err)
	assert.True(t, kube.IsUnhealthy(err), "%v", err)
	assert.Contains(t, err.Error(), "wave 0 is not healthy")
	assert.Contains(t, err.Error(), "Pod/"+e.ns+"/failing: Degraded")
	assert.Equal(t, map[string]string{"Pod/failing": "created"}, actions(cs))
	assert.Contains(t, cs.Entries[0].Message, "Degraded", "the change says why the wave failed")
	assert.False(t, e.exists(configMaps, "later"))

	unknown := decode(t, "apiVersion: nope.example.com/v1\nkind: Gizmo\nmetadata: {name: g}\n")
	cs, err = e.apply([]*unstructured.Unstructured{configMap("first", nil, nil), unknown}, nil)
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err), "an unknown kind cannot be applied: %v", err)
	assert.Contains(t, err.Error(), "Gizmo/g: map: ")
	assert.False(t, e.exists(configMaps, "first"), "nothing is applied when an object is refused before any write")
	assert.Equal(t, map[string]string{"Gizmo/g": "failed"}, actions(cs))
}

func guestbookDeployment(t *testing.T) *unstructured.Unstructured {
	for _, o := range guestbook(t) {
		if o.GetKind() == "Deployment" {
			return o
		}
	}
	t.Fatal("no Deployment in the guestbook")
	return nil
}

func (e *env) replicaSets() []unstructured.Unstructured {
	e.t.Helper()
	list, err := e.dyn.Resource(replicaSets).Namespace(e.ns).List(e.ctx, metav1.ListOptions{})
	require.NoError(e.t, err)
	return list.Items
}

func rv(t *testing.T, obj *unstructured.Unstructured) uint64 {
	t.Helper()
	var n uint64
	for _, c := range obj.GetResourceVersion() {
		n = n*10 + uint64(c-'0')
	}
	return n
}

// TestARefusedObjectIsOutOfSync: a change Git makes that the API server
// refuses (a number where it wants a string) leaves the live object
// unlike Git: OutOfSync with the server's reason, as in Argo CD, so that
// an automated sync is tried (and fails with that reason per object).
func TestARefusedObjectIsOutOfSync(t *testing.T) {
	e := newEnv(t)
	_, err := e.apply([]*unstructured.Unstructured{configMap("settings", nil, nil)}, nil)
	require.NoError(t, err)
	bad := decode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {greeting: 1}\n")
	states, err := e.cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: []*unstructured.Unstructured{bad}})
	require.NoError(t, err, "the region answered")
	require.Len(t, states, 1)
	assert.Equal(t, app.SyncStatusOutOfSync, states[0].Sync)
	assert.Contains(t, states[0].Message, "the API server refuses the desired object")
	assert.Contains(t, states[0].Message, "expected string")

	cs, err := e.apply([]*unstructured.Unstructured{bad}, nil)
	require.Error(t, err)
	assert.True(t, kube.IsRefused(err), "%v", err)
	assert.Equal(t, map[string]string{"ConfigMap/settings": "failed"}, actions(cs))
	assert.Contains(t, cs.Entries[0].Message, "expected string", "the object's result says why")
}
