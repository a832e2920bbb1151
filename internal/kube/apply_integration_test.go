package kube_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

func TestApplyCompareGuestbook(t *testing.T) {
	e := newEnv(t)
	objs := guestbook(t)

	cs, err := e.apply(objs, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Deployment/guestbook-ui": "created", "Service/guestbook-ui": "created"}, actions(cs))
	for _, c := range cs.Entries {
		assert.Equal(t, e.ns, c.Key.Namespace, "namespaced objects get the destination namespace")
	}
	assert.Equal(t, "Service", cs.Entries[0].Key.Kind, "Services go before workloads")

	live, err := e.dyn.Resource(deployments).Namespace(e.ns).Get(e.ctx, "guestbook-ui", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, e.ns, live.GetLabels()[kube.LabelApp])
	assert.Equal(t, e.ns+":apps/Deployment:"+e.ns+"/guestbook-ui", live.GetAnnotations()[kube.AnnotationTrackingID])
	assert.True(t, kube.IsTracked(e.ns, live))

	var states []kube.ResourceState
	e.eventually("guestbook Synced and Healthy", func() bool {
		states = e.compare(objs, nil)
		for _, s := range states {
			if s.Sync != app.SyncStatusSynced || s.Health != app.HealthHealthy {
				return false
			}
		}
		return true
	})
	assert.Len(t, states, 2)

	cs, err = e.apply(objs, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Deployment/guestbook-ui": "unchanged", "Service/guestbook-ui": "unchanged"}, actions(cs))

	// Someone scales the Deployment by hand: drift.
	_, err = e.dyn.Resource(deployments).Namespace(e.ns).Patch(e.ctx, "guestbook-ui", types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)
	states = e.compare(objs, nil)
	assert.Equal(t, map[string]app.SyncStatusCode{"Deployment/guestbook-ui": "OutOfSync", "Service/guestbook-ui": "Synced"}, syncs(states))
	for _, s := range states {
		if s.Key.Kind == "Deployment" {
			assert.Equal(t, "differs at spec.replicas", s.Message)
		}
	}

	cs, err = e.apply(objs, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Deployment/guestbook-ui": "configured", "Service/guestbook-ui": "unchanged"}, actions(cs))
	for _, c := range cs.Entries {
		if c.Key.Kind == "Deployment" {
			assert.Contains(t, c.Message, "spec.replicas")
		}
	}
	assert.Equal(t, map[string]app.SyncStatusCode{"Deployment/guestbook-ui": "Synced", "Service/guestbook-ui": "Synced"}, syncs(e.compare(objs, nil)))
}

func TestCompareMissing(t *testing.T) {
	e := newEnv(t)
	states := e.compare(guestbook(t), nil)
	require.Len(t, states, 2)
	for _, s := range states {
		assert.Equal(t, app.SyncStatusOutOfSync, s.Sync)
		assert.Equal(t, app.HealthMissing, s.Health)
	}
}

// TestCompareSaysEachWave: each state carries its object's sync wave, in
// wave order, as the UI shows it on the tree's nodes.
func TestCompareSaysEachWave(t *testing.T) {
	e := newEnv(t)
	late := configMap("late", nil, map[string]string{app.AnnotationSyncWave: "2"})
	early := configMap("early", nil, map[string]string{app.AnnotationSyncWave: "-1"})
	plain := configMap("plain", nil, nil)
	waves := map[string]int{}
	var order []string
	for _, s := range e.compare([]*unstructured.Unstructured{late, plain, early}, nil) {
		waves[s.Key.Name] = s.Wave
		order = append(order, s.Key.Name)
	}
	assert.Equal(t, map[string]int{"early": -1, "plain": 0, "late": 2}, waves)
	assert.Equal(t, []string{"early", "plain", "late"}, order)
}

func TestPrune(t *testing.T) {
	e := newEnv(t)
	objs := guestbook(t)
	cs, err := e.apply(objs, nil)
	require.NoError(t, err)
	previous := keys(cs)

	// Objects that look like the app's but are not: a copied label, and a
	// tracking id copied from the Service onto another object.
	labelOnly := configMap("label-only", map[string]string{kube.LabelApp: e.ns}, nil)
	svcID := kube.TrackingID(e.ns, app.ResourceKey{Kind: "Service", Namespace: e.ns, Name: "guestbook-ui"})
	copied := configMap("copied-id", map[string]string{kube.LabelApp: e.ns}, map[string]string{kube.AnnotationTrackingID: svcID})
	for _, cm := range []*unstructured.Unstructured{labelOnly, copied} {
		_, err := e.dyn.Resource(configMaps).Namespace(e.ns).Create(e.ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	previous = append(previous, app.ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: e.ns, Name: "label-only"})

	var onlyDeployment []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			onlyDeployment = append(onlyDeployment, o)
		}
	}

	// Without Prune the Service stays, and Compare says it should go.
	cs, err = e.apply(onlyDeployment, func(r *kube.ApplyRequest) { r.Inventory = previous })
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Deployment/guestbook-ui": "unchanged"}, actions(cs))
	assert.True(t, e.exists(services, "guestbook-ui"))
	states := e.compare(onlyDeployment, previous)
	assert.Equal(t, map[string]app.SyncStatusCode{"Deployment/guestbook-ui": "Synced", "Service/guestbook-ui": "OutOfSync"}, syncs(states))
	for _, s := range states {
		if s.Key.Kind == "Service" {
			assert.Contains(t, s.Message, "no longer desired")
		}
	}

	// A dry run reports the prune and keeps the Service.
	cs, err = e.apply(onlyDeployment, func(r *kube.ApplyRequest) { r.Inventory, r.Prune, r.DryRun = previous, true, true })
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Deployment/guestbook-ui": "unchanged", "Service/guestbook-ui": "pruned"}, actions(cs))
	assert.True(t, e.exists(services, "guestbook-ui"))

	cs, err = e.apply(onlyDeployment, func(r *kube.ApplyRequest) { r.Inventory, r.Prune = previous, true })
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Deployment/guestbook-ui": "unchanged", "Service/guestbook-ui": "pruned"}, actions(cs))
	e.eventually("the Service to be gone", func() bool { return !e.exists(services, "guestbook-ui") })
	assert.True(t, e.exists(configMaps, "label-only"), "a label alone is not ownership")
	assert.True(t, e.exists(configMaps, "copied-id"), "a copied tracking id is not ownership")
	assert.Equal(t, map[string]app.SyncStatusCode{"Deployment/guestbook-ui": "Synced"}, syncs(e.compare(onlyDeployment, previous)))
}

// TestPruneCheckRefuses: a PruneCheck that refuses stops the prune with
// nothing deleted, and its error is the sync's; it is asked about exactly
// the objects the prune would delete.
func TestPruneCheckRefuses(t *testing.T) {
	e := newEnv(t)
	objs := guestbook(t)
	cs, err := e.apply(objs, nil)
	require.NoError(t, err)
	previous := keys(cs)
	var onlyDeployment []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			onlyDeployment = append(onlyDeployment, o)
		}
	}

	refused := errors.New("project team-a does not allow Service")
	var asked []string
	_, err = e.apply(onlyDeployment, func(r *kube.ApplyRequest) {
		r.Inventory, r.Prune = previous, true
		r.PruneCheck = func(stale []*unstructured.Unstructured) error {
			for _, o := range stale {
				asked = append(asked, o.GetKind()+"/"+o.GetName())
			}
			return refused
		}
	})
	require.ErrorIs(t, err, refused)
	assert.Equal(t, []string{"Service/guestbook-ui"}, asked)
	assert.True(t, e.exists(services, "guestbook-ui"), "a refused prune deletes nothing")

	// Allowed, the same prune goes ahead.
	_, err = e.apply(onlyDeployment, func(r *kube.ApplyRequest) {
		r.Inventory, r.Prune = previous, true
		r.PruneCheck = func([]*unstructured.Unstructured) error { return nil }
	})
	require.NoError(t, err)
	e.eventually("the Service to be gone", func() bool { return !e.exists(services, "guestbook-ui") })
}

// TestApplyWrongType: a number where a ConfigMap wants a string is the
// manifest's fault, not a passing failure: IsInvalid, so not retried.
func TestApplyWrongType(t *testing.T) {
	e := newEnv(t)
	bad := decode(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {version: 1}\n")
	_, err := e.apply([]*unstructured.Unstructured{bad}, nil)
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err), "%v", err)
	assert.Contains(t, err.Error(), "ConfigMap/"+e.ns+"/settings: apply: ")
	assert.Contains(t, err.Error(), ".data.version: expected string")
}

func TestApplyInvalidObject(t *testing.T) {
	e := newEnv(t)
	bad := invalidDeployment(t)
	objs := append(guestbook(t), bad)
	cs, err := e.apply(objs, func(r *kube.ApplyRequest) { r.Prune = true })
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err), "%v", err)
	assert.True(t, strings.HasPrefix(err.Error(), "Deployment/"+e.ns+"/bad: apply: "), "%v", err)
	assert.Contains(t, err.Error(), "spec.replicas")
	assert.Equal(t, map[string]string{"Deployment/bad": "failed", "Deployment/guestbook-ui": "created", "Service/guestbook-ui": "created"}, actions(cs))
	assert.True(t, e.exists(deployments, "guestbook-ui"))
	assert.False(t, e.exists(deployments, "bad"))
}

func TestSecretValuesStayOut(t *testing.T) {
	e := newEnv(t)
	// "aHVudGVyMg==" is "hunter2"; the key name is invalid, so the API
	// server refuses the Secret. Key names may show; values never.
	secret := decode(t, `
apiVersion: v1
kind: Secret
metadata: {name: creds}
data: {"bad key!": aHVudGVyMg==}
`)
	cs, err := e.apply([]*unstructured.Unstructured{secret}, nil)
	require.Error(t, err)
	assert.True(t, kube.IsInvalid(err), "%v", err)
	for _, text := range []string{err.Error(), cs.Entries[0].Message} {
		assert.NotContains(t, text, "aHVudGVyMg==")
		assert.NotContains(t, text, "hunter2")
	}
	assert.Equal(t, app.ActionFailed, cs.Entries[0].Action)

	good := decode(t, `
apiVersion: v1
kind: Secret
metadata: {name: creds}
stringData: {token: hunter2}
`)
	cs, err = e.apply([]*unstructured.Unstructured{good}, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Secret/creds": "created"}, actions(cs))
	states := e.compare([]*unstructured.Unstructured{good}, nil)
	require.Len(t, states, 1)
	assert.NotContains(t, states[0].Message, "hunter2")
}

func TestDryRunAndCreateNamespace(t *testing.T) {
	e := newEnv(t)
	target := e.ns + "-created"
	t.Cleanup(func() { _ = e.dyn.Resource(namespaces).Delete(e.ctx, target, metav1.DeleteOptions{}) })
	withTarget := func(dryRun bool) func(*kube.ApplyRequest) {
		return func(r *kube.ApplyRequest) { r.Namespace, r.CreateNamespace, r.DryRun = target, true, dryRun }
	}

	cs, err := e.apply(guestbook(t), withTarget(true))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Namespace/" + target: "created", "Deployment/guestbook-ui": "created", "Service/guestbook-ui": "created"}, actions(cs))
	_, err = e.dyn.Resource(namespaces).Get(e.ctx, target, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "a dry run creates nothing: %v", err)

	cs, err = e.apply(guestbook(t), withTarget(false))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Namespace/" + target: "created", "Deployment/guestbook-ui": "created", "Service/guestbook-ui": "created"}, actions(cs))
	ns, err := e.dyn.Resource(namespaces).Get(e.ctx, target, metav1.GetOptions{})
	require.NoError(t, err)
	assert.False(t, kube.IsTracked(e.ns, ns), "the created namespace is not the app's: never pruned")

	cs, err = e.apply(guestbook(t), withTarget(true))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"Deployment/guestbook-ui": "unchanged", "Service/guestbook-ui": "unchanged"}, actions(cs))
}
