package bench

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSumMetricWhere(t *testing.T) {
	const metrics = `# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="kustomization",result="success"} 7
controller_runtime_reconcile_total{controller="kustomization",result="requeue_after"} 93
controller_runtime_reconcile_total{controller="gitrepository",result="success"} 5
controller_runtime_reconcile_errors_total{controller="kustomization"} 2
`
	got, err := sumMetricWhere(strings.NewReader(metrics), "controller_runtime_reconcile_total", "controller", "kustomization")
	if err != nil || got != 100 {
		t.Errorf("kustomization reconciles = %v, %v; want 100 (every result, not the errors counter)", got, err)
	}
	if _, err := sumMetricWhere(strings.NewReader(metrics), "controller_runtime_reconcile_total", "controller", "bucket"); err == nil {
		t.Error("a controller without series: want an error")
	}
}

func TestReadyAt(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	ks := func(ready string, gen, observed int64, rev string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"kind":     "Kustomization",
			"metadata": map[string]any{"generation": gen},
			"status": map[string]any{
				"observedGeneration":  observed,
				"lastAppliedRevision": rev,
				"conditions":          []any{map[string]any{"type": "Ready", "status": ready}},
			},
		}}
	}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		sha  string
		want bool
	}{
		{"ready at the commit", ks("True", 1, 1, "main@sha1:"+sha), sha, true},
		{"ready at the previous commit", ks("True", 1, 1, "main@sha1:ffff"), sha, false},
		{"still reconciling", ks("Unknown", 1, 1, "main@sha1:"+sha), sha, false},
		{"status of an older generation", ks("True", 2, 1, "main@sha1:"+sha), sha, false},
		{"any commit", ks("True", 1, 1, "main@sha1:ffff"), "", true},
		{"no status", &unstructured.Unstructured{Object: map[string]any{"kind": "Kustomization"}}, "", false},
	} {
		if got := readyAt(tc.obj, tc.sha); got != tc.want {
			t.Errorf("%s: readyAt = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestTakingTurns(t *testing.T) {
	first := map[string]int{}
	for i := range 3 {
		sides := takingTurns(i, "flux")
		if len(sides) != 3 {
			t.Fatalf("run %d: %v, want three sides", i, sides)
		}
		first[sides[0]]++
	}
	if len(first) != 3 {
		t.Errorf("in three runs each side goes first once: %v", first)
	}
	if got := takingTurns(1); !slices.Equal(got, []string{"kubectl", "ferry"}) {
		t.Errorf("without Flux, run 1 = %v, want kubectl then ferry", got)
	}
}
