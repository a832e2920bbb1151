package kube_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestPlacements: each object gets the namespace and scope the real API
// server gives its kind; a kind of a CRD of the same set takes the CRD's
// scope; a kind nobody serves is unknown. The objects are left as they are.
func TestPlacements(t *testing.T) {
	e := newEnv(t)
	crd := decode(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Cluster
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`)
	objs := append(guestbook(t),
		configMap("settings", nil, nil),
		decode(t, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader, namespace: ignored}\n"),
		crd,
		decode(t, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"),
		decode(t, "apiVersion: nowhere.example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: x}\n"),
	)
	placed, err := e.cluster.Placements(e.ns, objs)
	require.NoError(t, err)
	got := map[string]app.PlacedObject{}
	for _, p := range placed {
		got[p.Key.Kind] = p
	}
	require.Equal(t, e.ns, got["ConfigMap"].Key.Namespace)
	require.True(t, got["ConfigMap"].Namespaced && got["ConfigMap"].Known)
	require.True(t, got["Deployment"].Namespaced)
	require.Equal(t, "", got["ClusterRole"].Key.Namespace, "a cluster-scoped object loses its namespace")
	require.True(t, got["ClusterRole"].Known && !got["ClusterRole"].Namespaced)
	require.True(t, got["Widget"].Known && !got["Widget"].Namespaced, "the CRD of the same set says Cluster")
	require.False(t, got["Gadget"].Known)
	require.Equal(t, "ignored", objs[len(objs)-4].GetNamespace(), "the objects themselves are not changed")
}
