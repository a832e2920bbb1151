package bench

import (
	"cmp"
	"fmt"
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
	var b strings.Builder
	b.WriteString("\nWhere the machine's CPU went from the first apply to the last app Synced and Healthy (utime+stime from /proc; " +
		"every process read every 2 s, so that those that started and ended meanwhile count up to their last reading; besides the stack's, the commands of 1 % of the busy time or more; " +
		"the rest is the machine's busy time less the processes listed: smaller commands, processes shorter than a reading, the kernel and other users):\n\n" +
		"| process | core-seconds | ms per app |\n| --- | --- | --- |\n")
	listed, kube := 0.0, 0.0
	for _, name := range names {
		d := rows[name]
		fmt.Fprintf(&b, "| %s | %s | %s |\n", name, num(d), num(d/float64(n)*1000))
		listed += d
		if slices.Contains(kubeCommands, name) {
			kube += d
		}
	}
	all := busy * secs
	fmt.Fprintf(&b, "| the rest | %s | %s |\n| the machine, busy | %s | %s |\n", num(all-listed), num((all-listed)/float64(n)*1000), num(all), num(all/float64(n)*1000))
	cores := float64(runtime.NumCPU())
	fmt.Fprintf(&b, "\nIn %s s, %d cores give %s ms of CPU per app; this onboarding used %s ms per app, of which the cluster's own processes (%s) %s ms, "+
		"the work of putting the objects there, which the kubectl floor pays too.\n",
		num(goalSecs), int(cores), num(goalSecs*cores/float64(n)*1000), num(all/float64(n)*1000), strings.Join(kubeCommands, ", "), num(kube/float64(n)*1000))
	return b.String()
}
