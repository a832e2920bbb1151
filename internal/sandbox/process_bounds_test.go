package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// needsWholeBounds fails a process sandbox that has no cgroup, unless this
// kernel has no memory or pids controller at all.
func needsWholeBounds(t *testing.T, r Runner) {
	t.Helper()
	err := BoundsWhole(r)
	if err == nil {
		return
	}
	cgroups, _ := os.ReadFile("/proc/cgroups")
	for _, c := range []string{"memory", "pids"} {
		if !strings.Contains(string(cgroups), c+"\t") {
			t.Skipf("this kernel has no %s cgroup controller (/proc/cgroups): %v", c, err)
		}
	}
	t.Fatal(err)
}

// heldPlugin starts six processes that each hold 60 MB at once, and
// renders a ConfigMap saying how many held it together. Each is a tail
// that keeps the last 60 MB of its input until the input ends, which it
// does once all six are full (or after 10 s): tail reads in blocks, where
// a shell's command substitution reads 128 bytes a call, each a trap of
// gVisor's platform (over a minute for 360 MB, past the render's time on
// a loaded machine).
const heldPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: held
spec:
  generate:
    command: [sh, -c]
    args:
      - |
        for i in 1 2 3 4 5 6; do
          {
            head -c 60000000 /dev/zero
            touch /tmp/held-$i
            n=0
            while [ $(ls /tmp | grep -c held-) -lt 6 ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
          } | tail -c 60000000 | wc -c | grep -qx 60000000 &
        done
        wait
        printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held}\ndata: {held: "%s"}\n' "$(ls /tmp | grep -c held-)"
`

// TestSandboxBoundsTheMemoryOfAllItsProcesses: a plugin whose six
// processes hold 60 MB each, none over the 256 MiB limit alone but 360 MB
// together, ends as the memory LimitError; the next render works. (The
// renderer here is this test binary, whose start alone maps more than
// 128 MiB of data at times: a smaller limit would fail the plain render
// for that, not for the plugin.)
func TestSandboxBoundsTheMemoryOfAllItsProcesses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "held.yaml"), []byte(heldPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	plugins, err := render.LoadPlugins(dir)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"app/x.held": "", "plain/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n"})
	forEachSandbox(t, func(t *testing.T, r Runner) {
		needsWholeBounds(t, r)
		sr := testRenderer(t, r, Limits{Memory: 256 << 20})
		sr.Settings.Plugins, sr.PluginDir = plugins, dir
		res, err := sr.Render(context.Background(), root, app.Source{Path: "app", Plugin: &app.PluginSource{Name: "held"}}, render.Options{AppName: "held"})
		var limit *render.LimitError
		if !errors.As(err, &limit) || limit.What != "memory" {
			if err == nil {
				t.Fatalf("the render succeeded: %v; want a memory LimitError", res.Objects[0].Object["data"])
			}
			t.Fatalf("err = %v, want a memory LimitError", err)
		}
		for _, want := range []string{"render app:", "256 MiB", "--render-memory"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		if _, err := sr.Render(context.Background(), root, app.Source{Path: "plain"}, render.Options{AppName: "plain"}); err != nil {
			t.Fatalf("a render after the limit: %v", err)
		}
	})
}

// TestSandboxBoundsItsProcesses: 700 processes at once are refused (the
// limit is 512, threads included); in the process sandbox the fork fails
// and 100 processes are fine.
func TestSandboxBoundsItsProcesses(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, r Runner) {
		needsWholeBounds(t, r)
		res, err := r.Run(context.Background(), Spec{
			Args: []string{"/bin/sh", "-c", `i=0; while [ $i -lt 700 ]; do sleep 60 & i=$((i+1)); done; echo started $i`},
			Env:  []string{"PATH=/usr/bin:/bin"}, Mounts: shellMounts(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "started 700") {
			t.Fatalf("700 processes started in the %s sandbox: status %d, %q %s", r.Mode(), res.ExitCode, res.Stdout, res.Stderr)
		}
		if r.Mode() != ModeProcess {
			// gVisor's limit is its whole sandbox's on the host: on the
			// ptrace platform each process has a stub there too, and the
			// sandbox ends.
			return
		}
		if !strings.Contains(strings.ToLower(string(res.Stderr)), "fork") {
			t.Errorf("the shell did not fail to fork: status %d, %s", res.ExitCode, res.Stderr)
		}
		// Well under the limit is fine.
		res = shell(t, r, `i=0; while [ $i -lt 100 ]; do sleep 1 & i=$((i+1)); done; wait; echo started $i`)
		if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "started 100" {
			t.Errorf("100 processes in the %s sandbox: status %d, %q %s", r.Mode(), res.ExitCode, res.Stdout, res.Stderr)
		}
	})
}

// TestProcessSandboxRefusesNamespaces: no new user namespace (which would
// give its processes every capability in it), nor any other namespace or
// mount, and the seccomp filter is in force.
func TestProcessSandboxRefusesNamespaces(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, r Runner) {
		if r.Mode() != ModeProcess {
			t.Skip("gVisor's namespaces are the sentry's own, not the host kernel's")
		}
		for _, cmd := range []string{"unshare -U true", "unshare -Urn true", "unshare -Ur true", "unshare -n true", "unshare -m true"} {
			res := shell(t, r, cmd)
			if res.ExitCode == 0 {
				t.Errorf("%q in the process sandbox succeeded", cmd)
			} else if !strings.Contains(string(res.Stderr), "Operation not permitted") {
				t.Errorf("%q: status %d, %s; want Operation not permitted", cmd, res.ExitCode, res.Stderr)
			}
		}
		if res := shell(t, r, "grep Seccomp: /proc/self/status"); !strings.Contains(string(res.Stdout), "2") {
			t.Errorf("no seccomp filter in the process sandbox: %q %s", res.Stdout, res.Stderr)
		}
		// What renders need still works: processes, threads, pipes.
		if res := shell(t, r, "echo ok | cat | tr a-z A-Z"); strings.TrimSpace(string(res.Stdout)) != "OK" {
			t.Errorf("a pipeline in the process sandbox: status %d, %q %s", res.ExitCode, res.Stdout, res.Stderr)
		}
	})
}

// TestProcessSandboxSweepsDeadWorkersCgroups: a cgroup a dead worker left
// is removed when a process sandbox is made; a live worker's stays.
func TestProcessSandboxSweepsDeadWorkersCgroups(t *testing.T) {
	r := processRunner(t)
	needsWholeBounds(t, r)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	parents := r.(*process).cgroups.parents
	var left, kept []string
	for _, parent := range parents {
		l := filepath.Join(parent, fmt.Sprintf("ferry-%d-0123456789abcdef", dead.Process.Pid))
		k := filepath.Join(parent, fmt.Sprintf("ferry-%d-0123456789abcdef", os.Getpid()))
		for _, dir := range []string{l, k} {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		left, kept = append(left, l), append(kept, k)
	}
	t.Cleanup(func() {
		for _, dir := range append(left, kept...) {
			_ = os.Remove(dir)
		}
	})
	processRunner(t)
	for _, dir := range left {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the dead worker's cgroup %s is still there (stat: %v)", dir, err)
		}
	}
	for _, dir := range kept {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("the live worker's cgroup %s: %v", dir, err)
		}
	}
}
