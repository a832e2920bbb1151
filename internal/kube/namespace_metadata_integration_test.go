package kube_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

func getNamespace(t *testing.T, e *env, name string) *unstructured.Unstructured {
	t.Helper()
	ns, err := e.dyn.Resource(namespaces).Get(e.ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	return ns
}

// TestManagedNamespaceMetadata: the namespace CreateNamespace makes carries
// managedNamespaceMetadata's labels and annotations; a later sync with
// other metadata updates them (a label the spec dropped goes), and what
// someone else set on the namespace stays, as in Argo CD.
func TestManagedNamespaceMetadata(t *testing.T) {
	e := newEnv(t)
	target := e.ns + "-meta"
	t.Cleanup(func() { _ = e.dyn.Resource(namespaces).Delete(e.ctx, target, metav1.DeleteOptions{}) })
	with := func(meta *app.ManagedNamespaceMetadata) func(*kube.ApplyRequest) {
		return func(r *kube.ApplyRequest) { r.Namespace, r.CreateNamespace, r.NamespaceMetadata = target, true, meta }
	}

	first := &app.ManagedNamespaceMetadata{
		Labels:      map[string]string{"team": "web", "tier": "front"},
		Annotations: map[string]string{"example.com/owner": "alice"},
	}
	cs, err := e.apply(guestbook(t), with(first))
	require.NoError(t, err)
	assert.Equal(t, "created", actions(cs)["Namespace/"+target])
	ns := getNamespace(t, e, target)
	assert.Equal(t, "web", ns.GetLabels()["team"])
	assert.Equal(t, "front", ns.GetLabels()["tier"])
	assert.Equal(t, "alice", ns.GetAnnotations()["example.com/owner"])
	assert.False(t, kube.IsTracked(e.ns, ns), "the created namespace is not the app's: never pruned")

	cs, err = e.apply(guestbook(t), with(first))
	require.NoError(t, err)
	assert.NotContains(t, actions(cs), "Namespace/"+target, "the same metadata again changes nothing")

	// Someone else labels the namespace; the spec changes its metadata.
	_, err = e.dyn.Resource(namespaces).Patch(e.ctx, target, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"added-by":"someone"}}}`), metav1.PatchOptions{FieldManager: "someone"})
	require.NoError(t, err)
	second := &app.ManagedNamespaceMetadata{
		Labels:      map[string]string{"team": "api"},
		Annotations: map[string]string{"example.com/owner": "bob"},
	}
	cs, err = e.apply(guestbook(t), with(second))
	require.NoError(t, err)
	assert.Equal(t, "configured", actions(cs)["Namespace/"+target])
	ns = getNamespace(t, e, target)
	assert.Equal(t, "api", ns.GetLabels()["team"])
	assert.NotContains(t, ns.GetLabels(), "tier", "a label the spec no longer names goes")
	assert.Equal(t, "someone", ns.GetLabels()["added-by"], "others' labels stay")
	assert.Equal(t, "bob", ns.GetAnnotations()["example.com/owner"])
}

// TestManagedNamespaceMetadataOnExistingNamespace: a namespace that exists
// before the app gets the metadata too, as in Argo CD.
func TestManagedNamespaceMetadataOnExistingNamespace(t *testing.T) {
	e := newEnv(t)
	meta := &app.ManagedNamespaceMetadata{Labels: map[string]string{"team": "web"}}
	cs, err := e.apply(guestbook(t), func(r *kube.ApplyRequest) { r.CreateNamespace, r.NamespaceMetadata = true, meta })
	require.NoError(t, err)
	assert.Equal(t, "configured", actions(cs)["Namespace/"+e.ns])
	assert.Equal(t, "web", getNamespace(t, e, e.ns).GetLabels()["team"])
}
