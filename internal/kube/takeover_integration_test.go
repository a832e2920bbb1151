package kube_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/kube"
)

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

func webDeployment(ns string, minReady int, annotations map[string]string) *unstructured.Unstructured {
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27"}}},
			},
		},
	}}
	if minReady > 0 {
		_ = unstructured.SetNestedField(d.Object, int64(minReady), "spec", "minReadySeconds")
	}
	d.SetAnnotations(annotations)
	return d
}

func managers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, e := range obj.GetManagedFields() {
		out = append(out, e.Manager+"/"+string(e.Operation))
	}
	return out
}

// TestTakeOverWhatArgoCDApplied: a Deployment Argo CD applied (its
// client-side apply as the field manager argocd-controller, with kubectl's
// last-applied annotation and its tracking annotation) is taken over by
// Ferry's first apply: the same object (its UID), the same ReplicaSet,
// Argo CD's fields now Ferry's, its annotations gone, a human's edit kept.
// Then a field deleted from Git goes from the cluster. A ConfigMap Argo CD
// applied server-side is taken over the same way.
func TestTakeOverWhatArgoCDApplied(t *testing.T) {
	e := newEnv(t)
	deploys := e.dyn.Resource(deployments).Namespace(e.ns)

	// As Argo CD's application controller writes it (kubectl apply).
	argo := webDeployment(e.ns, 3, map[string]string{"team": "shop", "argocd.argoproj.io/tracking-id": "web:apps/Deployment:" + e.ns + "/web"})
	body, err := json.Marshal(argo.Object)
	require.NoError(t, err)
	argo.SetAnnotations(map[string]string{"team": "shop", "argocd.argoproj.io/tracking-id": "web:apps/Deployment:" + e.ns + "/web", lastApplied: string(body)})
	created, err := deploys.Create(e.ctx, argo, metav1.CreateOptions{FieldManager: "argocd-controller"})
	require.NoError(t, err)
	// A human's edit since.
	_, err = deploys.Patch(e.ctx, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"owner":"me"}}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)

	rs := e.replicaSetUIDs(1)

	cs, err := e.apply([]*unstructured.Unstructured{webDeployment(e.ns, 3, map[string]string{"team": "shop"})}, nil)
	require.NoError(t, err)
	assert.Equal(t, "configured", actions(cs)["Deployment/web"])
	live := e.get(deployments, "web")
	assert.Equal(t, created.GetUID(), live.GetUID(), "the same object")
	assert.Equal(t, rs, e.replicaSetUIDs(1), "its pod template is unchanged: no new ReplicaSet, no Pod restarted")
	assert.NotContains(t, managers(live), "argocd-controller/Update")
	assert.Contains(t, managers(live), "kubectl-edit/Update", "a human's edit stays the human's")
	assert.Equal(t, map[string]string{"team": "shop"}, withoutFerry(live.GetAnnotations()), "Argo CD's tracking and kubectl's last-applied annotations are gone")
	assert.Equal(t, "me", live.GetLabels()["owner"])
	assert.True(t, kube.IsTracked(e.ns, live))

	// A field and an annotation deleted from Git go from the cluster.
	_, err = e.apply([]*unstructured.Unstructured{webDeployment(e.ns, 0, nil)}, nil)
	require.NoError(t, err)
	live = e.get(deployments, "web")
	_, found, _ := unstructured.NestedFieldNoCopy(live.Object, "spec", "minReadySeconds")
	assert.False(t, found, "spec.minReadySeconds, deleted from Git, is gone")
	assert.Empty(t, withoutFerry(live.GetAnnotations()))
	assert.Equal(t, "me", live.GetLabels()["owner"])

	// Argo CD's server-side apply (ServerSideApply=true).
	cm := configMap("settings", nil, nil)
	cm.SetNamespace(e.ns)
	require.NoError(t, unstructured.SetNestedStringMap(cm.Object, map[string]string{"greeting": "hello", "old": "gone soon"}, "data"))
	cmBody, err := json.Marshal(cm.Object)
	require.NoError(t, err)
	force := true
	_, err = e.dyn.Resource(configMaps).Namespace(e.ns).Patch(e.ctx, "settings", types.ApplyPatchType, cmBody,
		metav1.PatchOptions{FieldManager: "argocd-controller", Force: &force})
	require.NoError(t, err)
	_, err = e.apply([]*unstructured.Unstructured{configMap("settings", nil, nil)}, nil)
	require.NoError(t, err)
	liveCM := e.get(configMaps, "settings")
	data, _, _ := unstructured.NestedStringMap(liveCM.Object, "data")
	assert.Equal(t, map[string]string{"greeting": "hello"}, data, "the key only Argo CD's apply set is gone")
	assert.NotContains(t, managers(liveCM), "argocd-controller/Apply")
}

// replicaSetUIDs waits until the namespace has n ReplicaSets and
// returns their UIDs.
func (e *env) replicaSetUIDs(n int) []string {
	e.t.Helper()
	var uids []string
	e.eventually(fmt.Sprintf("%d ReplicaSets", n), func() bool {
		uids = nil
		for _, rs := range e.replicaSets() {
			uids = append(uids, string(rs.GetUID()))
		}
		return len(uids) == n
	})
	return uids
}

// withoutFerry is annotations less Ferry's tracking.
func withoutFerry(annotations map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range annotations {
		if k != kube.AnnotationTrackingID && k != "deployment.kubernetes.io/revision" {
			out[k] = v
		}
	}
	return out
}
