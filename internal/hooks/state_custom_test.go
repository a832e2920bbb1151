package hooks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/customize"
	"github.com/ferry-gitops/ferry/internal/health"
)

// A hook of a custom kind is done when the operator's Lua health check
// says so, as any other resource of that kind is: Healthy succeeds it,
// Degraded fails it with the script's message, else it runs.
func TestHookOfACustomKindTakesItsHealthFromTheLuaCheck(t *testing.T) {
	set, err := customize.FromData(map[string]string{"resource.customizations.health.example.com_Probe": `
hs = {status = "Progressing", message = "probing"}
if obj.status ~= nil and obj.status.result == "pass" then hs.status = "Healthy"; hs.message = "probe passed" end
if obj.status ~= nil and obj.status.result == "fail" then hs.status = "Degraded"; hs.message = "probe failed: " .. obj.status.reason end
return hs`})
	require.NoError(t, err)
	hc := health.Checker{Custom: set}
	probe := func(status map[string]any) *unstructured.Unstructured {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Probe", "metadata": map[string]any{"name": "smoke", "namespace": "demo"}}}
		if status != nil {
			obj.Object["status"] = status
		}
		return obj
	}

	st, msg := state(probe(nil), hc)
	assert.Equal(t, Running, st)
	assert.Equal(t, "probing", msg)
	st, msg = state(probe(map[string]any{"result": "pass"}), hc)
	assert.Equal(t, Succeeded, st)
	assert.Equal(t, "probe passed", msg)
	st, msg = state(probe(map[string]any{"result": "fail", "reason": "timeout"}), hc)
	assert.Equal(t, Failed, st)
	assert.Equal(t, "probe failed: timeout", msg)

	// Without the check, the built-in rules know nothing of the kind.
	st, _ = state(probe(map[string]any{"result": "fail", "reason": "timeout"}), health.Checker{})
	assert.NotEqual(t, Failed, st)
}
