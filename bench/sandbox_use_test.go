package bench

import (
	"strings"
	"testing"
)

// The report's sentence on sandboxes reads the worker's counters: renders
// summed over tool and result, the reuse ends by reason.
func TestSandboxUseFromMetrics(t *testing.T) {
	text := `# HELP ferry_render_duration_seconds Duration of renders.
ferry_render_duration_seconds_count{result="ok",tool="Directory"} 90
ferry_render_duration_seconds_count{result="error",tool="Helm"} 10
ferry_render_sandbox_starts_total 25
ferry_render_sandbox_reuses_total 80
ferry_render_sandbox_reuse_ends_total{reason="idle"} 12
ferry_render_sandbox_reuse_ends_total{reason="busy"} 3
`
	u := sandboxUseOf(readSamples(strings.NewReader(text)))
	got := u.since(sandboxUse{renders: 20, starts: 5, ends: map[string]float64{"idle": 2}}).describe()
	for _, want := range []string{"rendered 80 times", "started 20 render sandboxes (4.00 renders per start)", "80 renders were served",
		"ended by reason: idle 10, busy 3."} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
	if (sandboxUse{}).describe() != "" {
		t.Error("a worker without sandboxes: a sentence")
	}
}
