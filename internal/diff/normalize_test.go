package diff

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func fromYAML(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestNormalizeDropsServerFields(t *testing.T) {
	live := fromYAML(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  uid: 0b4d
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2025-01-01T00:00:00Z"
  managedFields: [{manager: ferry}]
  annotations:
    deployment.kubernetes.io/revision: "3"
spec:
  replicas: 2
status:
  availableReplicas: 2
`)
	want := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": "web", "namespace": "shop"},
		"spec":       map[string]any{"replicas": float64(2)},
	}
	assert.Equal(t, want, Normalize(live))
	assert.Contains(t, live.Object, "status", "Normalize must not modify its input")
}

func TestDiffPaths(t *testing.T) {
	a := fromYAML(t, `
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 1
  template:
    spec:
      containers: [{name: web, image: "nginx:1"}]
data: {password: c2VjcmV0}
`).Object
	b := fromYAML(t, `
metadata: {name: web, labels: {app: web, tier: front}}
spec:
  replicas: 3
  template:
    spec:
      containers: [{name: web, image: "nginx:2"}]
data: {password: b3RoZXI=}
`).Object
	paths := Paths(a, b, 3)
	assert.Equal(t, []string{"data.password", "metadata.labels.tier", "spec.replicas", "spec.template.spec"}, paths)
	assert.Equal(t, []string{"data", "metadata", "spec"}, Paths(a, b, 1))
	assert.Empty(t, Paths(a, a, 3))

	msg := Summarize(paths)
	assert.NotContains(t, msg, "c2VjcmV0", "messages never carry values")
	assert.NotContains(t, msg, "nginx")
	assert.Equal(t, "a, b, c, d, e and 2 more", Summarize([]string{"a", "b", "c", "d", "e", "f", "g"}))
}
