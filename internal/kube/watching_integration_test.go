package kube_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// TestWatchingReportsHealthAndNewObjects: once its informers have synced,
// the live cache watches an app's compare, and reports what a skipped
// compare would have found: a change of status alone that changes an
// object's health from what the compare reported (once per change, and not
// after Ferry's own write), and an object with the app's label that someone
// else creates.
func TestWatchingReportsHealthAndNewObjects(t *testing.T) {
	e := newEnv(t)
	cluster, drifts := e.driftingCluster()
	lb := loadBalancer(e.ns)
	objs := []*unstructured.Unstructured{lb, configMap("settings", nil, nil)}
	// Asked first, before anything has started the informers of the app's
	// kinds: an apply starts them, and they may have synced by its return.
	assert.False(t, cluster.Watching(objs, nil), "before the informers of the app's kinds have synced")
	_, err := cluster.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.NoError(t, err)
	compare := func() {
		t.Helper()
		states, err := cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs})
		require.NoError(t, err)
		cluster.NoteCompared(e.ns, states)
	}
	compare()
	require.True(t, cluster.WaitSynced(e.ctx))
	require.True(t, cluster.Watching(objs, nil), "every kind of the app is watched")
	compare()

	quiet := func(what string) {
		t.Helper()
		select {
		case d := <-drifts:
			t.Errorf("%s: unexpected drift %+v", what, d)
		case <-time.After(time.Second):
		}
	}
	expect := func(what, kind string, by []string) {
		t.Helper()
		select {
		case d := <-drifts:
			assert.Equal(t, kind, d.Key.Kind, what)
			assert.Equal(t, by, d.By, what)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no drift reported", what)
		}
	}
	ingress := func(ip string) {
		t.Helper()
		patch := `{"status":{"loadBalancer":{"ingress":[{"ip":"` + ip + `"}]}}}`
		if ip == "" {
			patch = `{"status":{"loadBalancer":{"ingress":null}}}`
		}
		_, err := e.dyn.Resource(services).Namespace(e.ns).Patch(e.ctx, "edge", types.MergePatchType, []byte(patch),
			metav1.PatchOptions{FieldManager: "cloud-controller"}, "status")
		require.NoError(t, err)
	}
	quiet("after the compares")

	ingress("10.0.0.1")
	expect("the load balancer's address: Progressing to Healthy", "Service", []string{"health"})
	ingress("10.0.0.2")
	quiet("another address: still Healthy")
	ingress("")
	expect("the address gone: Healthy to Progressing", "Service", []string{"health"})

	_, err = cluster.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.NoError(t, err)
	ingress("10.0.0.3")
	quiet("Ferry wrote the Service since the compare: its health is the next compare's")

	extra := configMap("extra", map[string]string{kube.LabelApp: kube.AppLabel(e.ns)}, nil)
	extra.SetNamespace(e.ns)
	extra.SetAnnotations(map[string]string{kube.AnnotationTrackingID: kube.TrackingID(e.ns, kube.KeyOf(extra))})
	_, err = e.dyn.Resource(configMaps).Namespace(e.ns).Create(e.ctx, extra, metav1.CreateOptions{FieldManager: "kubectl-create"})
	require.NoError(t, err)
	expect("a new object with the app's label", "ConfigMap", []string{"kubectl-create"})
}

// TestWatchingReportsHealthChangedBeforeTheFirstList: the informer of a
// kind starts with the first compare or sync that needs it and lists
// later; a change of status made between a compare and that list changes
// the object's health with no update to report it, so the list does.
func TestWatchingReportsHealthChangedBeforeTheFirstList(t *testing.T) {
	e := newEnv(t)
	cluster, drifts := e.driftingCluster()
	lb := loadBalancer(e.ns)
	objs := []*unstructured.Unstructured{lb}
	// Applied and compared by a Cluster without a live cache: nothing
	// starts the watching Cluster's informers until Watching below.
	_, err := e.cluster.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.NoError(t, err)
	states, err := e.cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.NoError(t, err)
	require.Len(t, states, 1)
	require.Equal(t, app.HealthProgressing, states[0].Health, "a LoadBalancer without an address")
	cluster.NoteCompared(e.ns, states)

	_, err = e.dyn.Resource(services).Namespace(e.ns).Patch(e.ctx, "edge", types.MergePatchType,
		[]byte(`{"status":{"loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}}}`),
		metav1.PatchOptions{FieldManager: "cloud-controller"}, "status")
	require.NoError(t, err)

	assert.False(t, cluster.Watching(objs, nil), "the informer starts now")
	require.True(t, cluster.WaitSynced(e.ctx))
	select {
	case d := <-drifts:
		assert.Equal(t, "Service", d.Key.Kind)
		assert.Equal(t, []string{kube.DriftHealth}, d.By)
	case <-time.After(10 * time.Second):
		t.Fatal("the address given before the first list: no drift reported")
	}
	select {
	case d := <-drifts:
		t.Errorf("one change, one drift: also %+v", d)
	case <-time.After(time.Second):
	}
}

// loadBalancer is a Service of type LoadBalancer: Progressing until the
// cloud, played by the tests, gives it an address.
func loadBalancer(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "edge", "namespace": ns},
		"spec":     map[string]any{"type": "LoadBalancer", "ports": []any{map[string]any{"port": int64(80)}}},
	}}
}
