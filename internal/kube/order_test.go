package kube

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object(apiVersion, kind, namespace, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion(apiVersion)
	o.SetKind(kind)
	o.SetNamespace(namespace)
	o.SetName(name)
	return o
}

func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetKind() + "/" + o.GetName()
	}
	return out
}

func TestGroupByRank(t *testing.T) {
	objs := []*unstructured.Unstructured{
		object("example.com/v1", "Widget", "shop", "w"),
		object("apps/v1", "Deployment", "shop", "web"),
		object("batch/v1", "Job", "shop", "migrate"),
		object("v1", "Service", "shop", "web"),
		object("v1", "Secret", "shop", "creds"),
		object("v1", "ConfigMap", "shop", "settings"),
		object("rbac.authorization.k8s.io/v1", "RoleBinding", "shop", "rb"),
		object("rbac.authorization.k8s.io/v1", "Role", "shop", "r"),
		object("v1", "ServiceAccount", "shop", "sa"),
		object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com"),
		object("apps/v1", "Deployment", "shop", "api"),
		object("v1", "Namespace", "", "shop"),
		// A custom kind named like a core one is not ranked as the core one.
		object("serving.knative.dev/v1", "Service", "shop", "fn"),
	}
	var got [][]string
	for _, g := range groupByRank(objs) {
		got = append(got, names(g))
	}
	assert.Equal(t, [][]string{
		{"Namespace/shop"},
		{"CustomResourceDefinition/widgets.example.com"},
		{"ServiceAccount/sa"},
		{"Role/r"},
		{"RoleBinding/rb"},
		{"ConfigMap/settings", "Secret/creds"},
		{"Service/web"},
		{"Deployment/api", "Deployment/web"},
		{"Job/migrate"},
		{"Service/fn", "Widget/w"},
	}, got)
	assert.Equal(t, "Widget", objs[0].GetKind(), "groupByRank must not reorder its input")
}

func TestGroupByRankEmpty(t *testing.T) {
	assert.Empty(t, groupByRank(nil))
}
