package kube_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/kube"
)

func withOptions(obj *unstructured.Unstructured, opts string) *unstructured.Unstructured {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[app.AnnotationSyncOptions] = opts
	obj.SetAnnotations(ann)
	return obj
}

// TestValidateFalse: unknown fields fail a sync (strict field validation,
// as kubectl's default) unless the object says Validate=false.
func TestValidateFalse(t *testing.T) {
	e := newEnv(t)
	odd := func() *unstructured.Unstructured {
		return decode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: odd}\ndata: {a: b}\nspec: {typo: true}\n")
	}
	cs, err := e.apply([]*unstructured.Unstructured{odd()}, nil)
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err), "%v", err)
	assert.Contains(t, err.Error(), "ConfigMap/"+e.ns+"/odd: apply: ")
	assert.Contains(t, err.Error(), "spec")
	assert.Equal(t, "failed", actions(cs)["ConfigMap/odd"])

	cs, err = e.apply([]*unstructured.Unstructured{withOptions(odd(), "Validate=false")}, nil)
	require.NoError(t, err)
	assert.Equal(t, "created", actions(cs)["ConfigMap/odd"])
}

// TestReplace: Replace=true PUTs the whole object, so fields another
// manager added go; server-side apply leaves them with their owner.
func TestReplace(t *testing.T) {
	e := newEnv(t)
	cm := func() *unstructured.Unstructured { return configMap("settings", nil, nil) }
	_, err := e.apply([]*unstructured.Unstructured{cm()}, nil)
	require.NoError(t, err)
	_, err = e.dyn.Resource(configMaps).Namespace(e.ns).Patch(e.ctx, "settings", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"added-by":"someone"}}}`), metav1.PatchOptions{FieldManager: "someone"})
	require.NoError(t, err)

	_, err = e.apply([]*unstructured.Unstructured{cm()}, nil)
	require.NoError(t, err)
	assert.Equal(t, "someone", e.get(configMaps, "settings").GetLabels()["added-by"], "server-side apply keeps others' fields")

	cs, err := e.apply([]*unstructured.Unstructured{withOptions(cm(), "Replace=true")}, nil)
	require.NoError(t, err)
	assert.Equal(t, "configured", actions(cs)["ConfigMap/settings"])
	live := e.get(configMaps, "settings")
	assert.NotContains(t, live.GetLabels(), "added-by", "a replace writes the whole object")
	assert.True(t, kube.IsTracked(e.ns, live))
	assert.Equal(t, map[string]app.SyncStatusCode{"ConfigMap/settings": "Synced"},
		syncs(e.compare([]*unstructured.Unstructured{withOptions(cm(), "Replace=true")}, nil)))

	cs, err = e.apply([]*unstructured.Unstructured{withOptions(configMap("fresh", nil, nil), "Replace=true")}, nil)
	require.NoError(t, err)
	assert.Equal(t, "created", actions(cs)["ConfigMap/fresh"], "Replace creates what is missing")
}

// TestForce: a change to an immutable field fails with the API server's
// message, shows as OutOfSync, and goes through with Force=true by
// deleting and re-creating the object.
func TestForce(t *testing.T) {
	e := newEnv(t)
	deploy := func(selector string) *unstructured.Unstructured {
		return decode(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: `+selector+`}}
  template:
    metadata: {labels: {app: `+selector+`}}
    spec:
      containers: [{name: web, image: nginx}]
`)
	}
	_, err := e.apply([]*unstructured.Unstructured{deploy("v1")}, nil)
	require.NoError(t, err)
	uid := e.get(deployments, "web").GetUID()

	cs, err := e.apply([]*unstructured.Unstructured{deploy("v2")}, nil)
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err) && kube.IsImmutable(err), "%v", err)
	assert.Contains(t, err.Error(), "Deployment/"+e.ns+"/web: apply: ")
	assert.Contains(t, err.Error(), "immutable")
	assert.Equal(t, "failed", actions(cs)["Deployment/web"])
	states := e.compare([]*unstructured.Unstructured{deploy("v2")}, nil)
	require.Len(t, states, 1)
	assert.Equal(t, app.SyncStatusOutOfSync, states[0].Sync)
	assert.Contains(t, states[0].Message, "Force=true")

	cs, err = e.apply([]*unstructured.Unstructured{withOptions(deploy("v2"), "Force=true")}, func(r *kube.ApplyRequest) { r.DryRun = true })
	require.NoError(t, err)
	assert.Contains(t, cs.Entries[0].Message, "would be deleted and re-created")
	assert.Equal(t, uid, e.get(deployments, "web").GetUID(), "a dry run deletes nothing")

	cs, err = e.apply([]*unstructured.Unstructured{withOptions(deploy("v2"), "Force=true")}, nil)
	require.NoError(t, err)
	assert.Equal(t, "configured", actions(cs)["Deployment/web"])
	assert.Contains(t, cs.Entries[0].Message, "re-created")
	live := e.get(deployments, "web")
	assert.NotEqual(t, uid, live.GetUID())
	sel, _, _ := unstructured.NestedString(live.Object, "spec", "selector", "matchLabels", "app")
	assert.Equal(t, "v2", sel)
}

// TestApplyOutOfSyncOnly: objects in sync are not written, and are not in
// the change set (what Apply did): gitops-engine's ApplyOutOfSyncOnly
// leaves them out of the sync's results.
func TestApplyOutOfSyncOnly(t *testing.T) {
	e := newEnv(t)
	objs := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{configMap("a", nil, nil), configMap("b", nil, nil)}
	}
	only := func(r *kube.ApplyRequest) { r.Options.ApplyOutOfSyncOnly = true }
	cs, err := e.apply(objs(), only)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ConfigMap/a": "created", "ConfigMap/b": "created"}, actions(cs))
	before := e.get(configMaps, "a").GetResourceVersion()

	_, err = e.dyn.Resource(configMaps).Namespace(e.ns).Patch(e.ctx, "b", types.MergePatchType,
		[]byte(`{"data":{"greeting":"changed"}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)
	cs, err = e.apply(objs(), only)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ConfigMap/b": "configured"}, actions(cs))
	assert.Equal(t, before, e.get(configMaps, "a").GetResourceVersion(), "an object in sync is not written")
}

// TestDeleteFalse: an object marked Delete=false outlives its app.
func TestDeleteFalse(t *testing.T) {
	e := newEnv(t)
	_, err := e.apply([]*unstructured.Unstructured{configMap("gone", nil, nil), withOptions(configMap("kept", nil, nil), "Delete=false")}, nil)
	require.NoError(t, err)
	deleted, err := e.cluster.DeleteAll(e.ctx, e.ns, "")
	require.NoError(t, err)
	assert.Equal(t, []string{"ConfigMap"}, kindsOf(deleted))
	assert.Equal(t, "gone", deleted[0].Name)
	e.eventually("gone to go", func() bool { return !e.exists(configMaps, "gone") })
	assert.True(t, e.exists(configMaps, "kept"))
}

// TestBadSyncOptionsAnnotation: an unreadable annotation fails the object
// before anything is written.
func TestBadSyncOptionsAnnotation(t *testing.T) {
	e := newEnv(t)
	_, err := e.apply([]*unstructured.Unstructured{configMap("ok", nil, nil), withOptions(configMap("bad", nil, nil), "Prune=maybe")}, nil)
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err))
	assert.Contains(t, err.Error(), "ConfigMap/"+e.ns+`/bad: read options: annotation argocd.argoproj.io/sync-options: sync option "Prune=maybe"`)
	assert.False(t, e.exists(configMaps, "ok"))
}

func (e *env) get(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
	e.t.Helper()
	obj, err := e.dyn.Resource(gvr).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	require.NoError(e.t, err)
	return obj
}

// TestRespectIgnoreDifferences: with the option, a sync leaves what the
// app ignores as it is live (a hand-scaled replica count stays); without
// it, the sync puts Git's value back.
func TestRespectIgnoreDifferences(t *testing.T) {
	e := newEnv(t)
	rules, err := diff.Compile([]app.IgnoreDifference{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}})
	require.NoError(t, err)
	scale := func() {
		_, err := e.dyn.Resource(deployments).Namespace(e.ns).Patch(e.ctx, "guestbook-ui", types.MergePatchType,
			[]byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
		require.NoError(t, err)
	}
	replicas := func() int64 {
		n, _, _ := unstructured.NestedInt64(e.get(deployments, "guestbook-ui").Object, "spec", "replicas")
		return n
	}
	sync := func(respect bool) {
		_, err := e.apply(guestbook(t), func(r *kube.ApplyRequest) {
			r.Ignore, r.Options.RespectIgnoreDifferences = rules, respect
		})
		require.NoError(t, err)
	}
	sync(true)
	scale()
	sync(true)
	assert.Equal(t, int64(4), replicas(), "RespectIgnoreDifferences keeps the live value")
	states, err := e.cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: guestbook(t), Ignore: rules,
		Options: app.SyncOptions{RespectIgnoreDifferences: true}})
	require.NoError(t, err)
	assert.Equal(t, app.SyncStatusSynced, syncs(states)["Deployment/guestbook-ui"])
	sync(false)
	assert.Equal(t, int64(1), replicas(), "without it, the sync applies Git's value")
}

// TestSkipDryRunOnMissingResource: a custom resource whose CRD another app
// installs does not stop the sync before it starts: it is Missing in a
// compare, fails only when its wave comes, and goes in once its kind is
// served.
func TestSkipDryRunOnMissingResource(t *testing.T) {
	e := newEnv(t)
	group := e.ns + ".skip.test"
	crd := fixture(t, "waves", "NS", e.ns, "GROUP", group)[4]
	require.Equal(t, "CustomResourceDefinition", crd.GetKind())
	t.Cleanup(func() { _ = e.dyn.Resource(crds).Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	widget := func() *unstructured.Unstructured {
		w := decode(t, "apiVersion: "+group+"/v1\nkind: Widget\nmetadata: {name: w}\nspec: {size: 1}\n")
		w.SetAnnotations(map[string]string{"argocd.argoproj.io/sync-wave": "1", app.AnnotationSyncOptions: "SkipDryRunOnMissingResource=true"})
		return w
	}
	objs := func() []*unstructured.Unstructured {
		return []*unstructured.Unstructured{configMap("first", nil, nil), widget()}
	}

	states := e.compare(objs(), nil)
	assert.Equal(t, map[string]app.SyncStatusCode{"ConfigMap/first": "OutOfSync", "Widget/w": "OutOfSync"}, syncs(states))
	cs, err := e.apply(objs(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Widget/w: map: ")
	assert.Contains(t, err.Error(), "still not served")
	assert.Equal(t, map[string]string{"ConfigMap/first": "created", "Widget/w": "failed"}, actions(cs))

	_, err = e.cluster.Apply(e.ctx, kube.ApplyRequest{App: e.ns + "-crds", Objects: []*unstructured.Unstructured{crd}})
	require.NoError(t, err)
	cs, err = e.apply(objs(), nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"ConfigMap/first": "unchanged", "Widget/w": "created"}, actions(cs))
	for _, c := range cs.Entries {
		if c.Key.Kind == "Widget" {
			assert.Equal(t, e.ns, c.Key.Namespace, "placed in the destination namespace once its scope is known")
		}
	}
}
