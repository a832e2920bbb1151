package bench

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestOnboardCPU: a cluster's Temporal services and PostgreSQL count as
// Temporal, another command of 1 % of the busy time or more is a row of
// its own, a smaller one (the Web UI here) is in the rest, and the rest is
// the busy time less what is listed.
func TestOnboardCPU(t *testing.T) {
	spent := map[string]float64{"temporal-server": 30, "postgres": 10, "temporal-ui-ser": 1, "kube-apiserver": 50, "etcd": 10, "ferry-worker": 20, "runsc": 5}
	got := onboardCPU(spent, 1.5, 100, 1000, 60) // 1.5 cores busy for 100 s: 150 core-seconds
	for _, want := range []string{
		"| Temporal | 40.0 | 40.0 |",
		"| kube-apiserver | 50.0 | 50.0 |",
		"| ferry-worker | 20.0 | 20.0 |",
		"| runsc | 5.00 | 5.00 |",
		"| the rest | 25.0 | 25.0 |",
		"| the machine, busy | 150 | 150 |",
		"of which the cluster's own processes (kube-apiserver, etcd, kube-controller, kube-scheduler, kwok) 60.0 ms",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "temporal-ui") {
		t.Errorf("a command under 1 %% of the busy time has a row:\n%s", got)
	}
	if strings.Index(got, "kube-apiserver |") > strings.Index(got, "| Temporal |") {
		t.Errorf("the busiest process is not first:\n%s", got)
	}
}

// TestCPUTrackerCountsExitedProcesses: a process that starts and ends
// between the tracker's start and stop counts, up to its last reading.
func TestCPUTrackerCountsExitedProcesses(t *testing.T) {
	tr := trackCPU(50 * time.Millisecond)
	// A shell busy for a while: gone before stop reads again.
	loop := exec.Command("sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done")
	if err := loop.Run(); err != nil {
		t.Fatal(err)
	}
	spent := tr.stop()
	if got := spent["sh"]; got < 0.1 {
		t.Errorf("the exited shell spent %.3f core-seconds by the tracker, want at least 0.1 (all: %v)", got, spent)
	}
}
