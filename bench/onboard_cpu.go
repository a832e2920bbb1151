package bench

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
)

// kubeCommands are the processes of a region's cluster: what any way of
// putting the apps' objects there costs, kubectl's too.
var kubeCommands = []string{"kube-apiserver", "etcd", "kube-controller", "kube-scheduler", "kwok"}

// isTemporalCommand: the dev server, a cluster's services and its
// PostgreSQL; not the Web UI.
func isTemporalCommand(cmd string) bool {
	return (cmd == "temporal" || strings.HasPrefix(cmd, "temporal-") || cmd == "postgres") && !strings.HasPrefix(cmd, "temporal-ui")
}

// onboardCPU says where the machine's CPU went while n apps onboarded in
// secs seconds: the core-seconds and the milliseconds per app of each of
// the stack's processes and of any other command of 1 % of the busy time
// or more (spent, from a cpuTracker), the rest of the machine's busy cores
// (busy, on average: smaller commands, processes shorter than a reading,
// the kernel, other users), and what the goal's time leaves per app on
// this machine's cores.
func onboardCPU(spent map[string]float64, busy, secs float64, n int, goalSecs float64) string {
	if n == 0 || secs <= 0 {
		return ""
	}
	rows := map[string]float64{}
	for cmd, d := range spent {
		switch {
		case isTemporalCommand(cmd):
			rows["Temporal"] += d
		case slices.Contains(stackCommands, cmd):
			rows[cmd] += d
		case d >= busy*secs/100:
			// A command of 1 % of the busy time or more, by its name:
			// render sandboxes, the ferry CLI, Git's server side.
			rows[cmd] += d
		}
	}
	names := slices.Collect(func(yield func(string) bool) {
		for k := range rows {
			if !yield(k) {
				return
			}
		}
	})
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(rows[b], rows[a]) })
	all := busy * secs
	d := onboardCPUText{GoalSecs: goalSecs, Cores: runtime.NumCPU(), Kube: kubeCommands}
	listed, kube := 0.0, 0.0
	for _, name := range names {
		c := rows[name]
		d.Rows = append(d.Rows, processCPU{Name: name, CoreSeconds: c, MsPerApp: c / float64(n) * 1000})
		listed += c
		if slices.Contains(kubeCommands, name) {
			kube += c
		}
	}
	d.Rest, d.RestPerApp = all-listed, (all-listed)/float64(n)*1000
	d.Busy, d.BusyPerApp = all, all/float64(n)*1000
	d.BudgetPerApp = goalSecs * float64(d.Cores) / float64(n) * 1000
	d.KubePerApp = kube / float64(n) * 1000
	return say(d, "text")
}

// onboardCPUText is the data of text/onboard_cpu.md.tmpl: the processes'
// rows, the rest and the machine's busy time (core-seconds and ms per
// app), and what GoalSecs leave per app on the machine's Cores, beside
// what the cluster's own processes (Kube) took.
type onboardCPUText struct {
	Rows                               []processCPU
	Rest, RestPerApp, Busy, BusyPerApp float64
	GoalSecs, BudgetPerApp, KubePerApp float64
	Cores                              int
	Kube                               []string
}

// processCPU is one process's core-seconds and milliseconds per app.
type processCPU struct {
	Name                  string
	CoreSeconds, MsPerApp float64
}

func (onboardCPUText) textFile() string { return "onboard_cpu" }
