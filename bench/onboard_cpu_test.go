package bench

import (
	"strings"
	"testing"
)

// TestOnboardCPU: a cluster's Temporal services and PostgreSQL count as
// Temporal, the Web UI and unknown commands as the rest, and the rest is
// the busy time less what is listed.
func TestOnboardCPU(t *testing.T) {
	spent := map[string]float64{"temporal-server": 30, "postgres": 10, "temporal-ui-ser": 1, "kube-apiserver": 50, "etcd": 10, "ferry-worker": 20, "runsc": 5}
	got := onboardCPU(spent, 1.5, 100, 1000, 60) // 1.5 cores busy for 100 s: 150 core-seconds
	for _, want := range []string{
		"| Temporal | 40.0 | 40.0 |",
		"| kube-apiserver | 50.0 | 50.0 |",
		"| ferry-worker | 20.0 | 20.0 |",
		"| the rest | 30.0 | 30.0 |",
		"| the machine, busy | 150 | 150 |",
		"of which the cluster's own processes (kube-apiserver, etcd, kube-controller, kube-scheduler, kwok) 60.0 ms",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "kube-apiserver |") > strings.Index(got, "| Temporal |") {
		t.Errorf("the busiest process is not first:\n%s", got)
	}
}
