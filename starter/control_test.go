package main

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestObjectProblemIsTheSpecsAsItIs: apply prints the object's
// InvalidSpecError only when the worker wrote it for the spec the object
// has now; the condition of the spec before is not this spec's problem.
func TestObjectProblemIsTheSpecsAsItIs(t *testing.T) {
	withStatus := func(generation, observed int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{
			"conditions": []any{map[string]any{"type": "InvalidSpecError", "message": "Application spec is invalid: spec.x: unknown field"}},
		}}}
		u.SetGeneration(generation)
		if observed > 0 {
			require.NoError(t, unstructured.SetNestedField(u.Object, observed, "status", "observedGeneration"))
		}
		return u
	}
	require.Contains(t, objectProblem(withStatus(2, 2)), "spec.x")
	require.Empty(t, objectProblem(withStatus(3, 2)), "the spec before's condition")
	require.Contains(t, objectProblem(withStatus(2, 0)), "spec.x", "a worker that writes no generation: as it says")
	require.Empty(t, objectProblem(&unstructured.Unstructured{Object: map[string]any{}}))
}
