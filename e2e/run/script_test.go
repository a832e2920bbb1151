// Package run tests `make run` as a newcomer meets it: hack/run.sh started
// again and again on one state directory, stopped with Ctrl-C or kill, with
// its ports taken or a part that cannot start, and `ferry app apply` with no
// worker. Each test starts its own one-region stack (FERRY_REGIONS), so the
// package has no shared stack.
package run

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// region is the one region of every stack here: enough, and cheap.
const region = "us-east-1"

// Bounds that turn a hang into a failure; none of them is a measure of speed.
const (
	startBound = 10 * time.Minute // a run up to "Ferry is running." (the tools may still be building)
	stopBound  = 3 * time.Minute
)

// script is one hack/run.sh, in its own process group as a shell's job is,
// so that Ctrl-C (SIGINT to the group) reaches it as it reaches `make run`.
type script struct {
	t    *testing.T
	cmd  *exec.Cmd
	dir  string // FERRY_RUN_DIR
	out  string // its stdout and stderr
	mark string // FERRY_RUN_TEST_MARK: every process it starts inherits it
	done chan struct{}
	err  error
}

// startScript starts hack/run.sh on the state directory dir with one region.
func startScript(t *testing.T, dir string, extraEnv ...string) *script {
	t.Helper()
	runSh, err := filepath.Abs("../../hack/run.sh")
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "run.out")
	f, err := os.Create(out)
	require.NoError(t, err)
	s := &script{t: t, dir: dir, out: out, done: make(chan struct{}),
		mark: fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())}
	s.cmd = exec.Command(runSh)
	s.cmd.Env = append(os.Environ(), "FERRY_RUN_DIR="+dir, "FERRY_REGIONS="+region, "FERRY_BIN="+ferryBin(t),
		"FERRY_RUN_TEST_MARK="+s.mark)
	s.cmd.Env = append(s.cmd.Env, extraEnv...)
	s.cmd.Stdout, s.cmd.Stderr = f, f
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, s.cmd.Start())
	go func() {
		s.err = s.cmd.Wait()
		f.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default: // the test failed half-way: leave nothing behind
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(stopBound):
				_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
				<-s.done
			}
		}
		if t.Failed() {
			s.logTails()
		}
	})
	return s
}

// output is what the script has printed so far.
func (s *script) output() string {
	b, _ := os.ReadFile(s.out)
	return string(b)
}

// waitOutput waits until the script has printed text, or has exited; it
// reports which.
func (s *script) waitOutput(text string) (printed bool) {
	s.t.Helper()
	deadline := time.Now().Add(startBound)
	for time.Now().Before(deadline) {
		if strings.Contains(s.output(), text) {
			return true
		}
		select {
		case <-s.done:
			return strings.Contains(s.output(), text)
		case <-time.After(200 * time.Millisecond):
		}
	}
	s.t.Fatalf("hack/run.sh neither printed %q nor exited within %s; it printed:\n%s", text, startBound, s.output())
	return false
}

// waitRunning waits for "Ferry is running.".
func (s *script) waitRunning() {
	s.t.Helper()
	if !s.waitOutput("Ferry is running.") {
		s.t.Fatalf("hack/run.sh exited (%v) before the stack ran; it printed:\n%s", s.err, s.output())
	}
}

// wait waits for the script to exit and returns its error.
func (s *script) wait() error {
	s.t.Helper()
	select {
	case <-s.done:
		return s.err
	case <-time.After(stopBound):
		s.t.Fatalf("hack/run.sh still runs %s after it was stopped; it printed:\n%s", stopBound, s.output())
		return nil
	}
}

// logTails logs the end of the logs of the script's parts.
func (s *script) logTails() {
	s.t.Logf("hack/run.sh printed:\n%s", s.output())
	for _, name := range []string{"dev-up.log", "worker.log"} {
		if b, err := os.ReadFile(filepath.Join(s.dir, name)); err == nil {
			lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
			s.t.Logf("%s ends:\n%s", name, strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	}
}

// ferry runs the ferry CLI in the env that the script's stack wrote, as a
// user does in another shell (`. DIR/stack/env`).
func (s *script) ferry(args ...string) (string, error) {
	s.t.Helper()
	return s.ferryIn(filepath.Join(s.dir, "cli-not-logged-in.json"), "", args...)
}

// ferryIn runs the ferry CLI with the config file config (FERRY_CONFIG:
// its logins) and stdin.
func (s *script) ferryIn(config, stdin string, args ...string) (string, error) {
	s.t.Helper()
	cmd := exec.Command("sh", append([]string{"-c", `. "$0/stack/env" && exec "$@"`, s.dir, filepath.Join(ferryBin(s.t), "ferry")}, args...)...)
	cmd.Env = append(os.Environ(), "FERRY_CONFIG="+config)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Start()
	if err == nil {
		timer := time.AfterFunc(stopBound, func() { _ = cmd.Process.Kill() })
		err = cmd.Wait()
		timer.Stop()
	}
	return out.String(), err
}

// requireDemoSyncedAndHealthy waits until the demo app is Synced and Healthy.
func (s *script) requireDemoSyncedAndHealthy() {
	s.t.Helper()
	out, err := s.ferry("app", "wait", "demo", "--sync", "--health", "--timeout", "3m")
	require.NoError(s.t, err, "ferry app wait demo: %s", out)
	out, err = s.ferry("app", "get", "demo")
	require.NoError(s.t, err, "ferry app get demo: %s", out)
	require.Contains(s.t, out, "Synced")
	require.Contains(s.t, out, "Healthy")
}

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// requireFrontDoor logs in to the ferry-server the script printed, as the
// admin with the password it printed, and reads the demo app through it.
func (s *script) requireFrontDoor() {
	s.t.Helper()
	m := regexp.MustCompile(`ferry-server +https://(\S+) .*\n +admin password (\S+);`).FindStringSubmatch(s.output())
	require.NotNil(s.t, m, "hack/run.sh prints ferry-server's address and the admin's password:\n%s", s.output())
	config := filepath.Join(s.t.TempDir(), "cli.json")
	out, err := s.ferryIn(config, m[2]+"\n", "login", m[1], "--username", "admin", "--password-stdin", "--insecure")
	require.NoError(s.t, err, "ferry login: %s", out)
	out, err = s.ferryIn(config, "", "app", "get", "demo")
	require.NoError(s.t, err, "ferry app get demo through ferry-server: %s", out)
	require.Contains(s.t, out, "Synced")
}

// ferryBin is the directory of the ferry and ferry-worker binaries:
// FERRY_BIN (make test builds them there), else built once for the package.
func ferryBin(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("FERRY_BIN"); dir != "" {
		return dir
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "ferry-run-test-bin-"); binErr != nil {
			return
		}
		for name, pkg := range map[string]string{"ferry": "starter", "ferry-worker": "worker", "ferry-server": "server"} {
			if out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, name), "github.com/ferry-gitops/ferry/"+pkg).CombinedOutput(); err != nil {
				binErr = fmt.Errorf("go build %s: %w: %s", pkg, err, out)
				return
			}
		}
	})
	require.NoError(t, binErr)
	return binDir
}

// process is one process found under /proc.
type process struct {
	pid, ppid, pgid int
	start           uint64 // start time since boot, in clock ticks: tells a reused pid apart
	comm            string
}

// processes reads every process under /proc.
func processes() map[int]process {
	out := map[int]process{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProcess(pid); ok {
			out[pid] = p
		}
	}
	return out
}

// readProcess parses /proc/PID/stat: "pid (comm) state ppid pgrp ... starttime(22nd) ...".
// A zombie is not found: it has exited; only its parent's wait is missing.
func readProcess(pid int) (process, bool) {
	p, state, ok := readStat(pid)
	return p, ok && state != "Z"
}

// readStat is readProcess with zombies too, and the process's state.
func readStat(pid int) (p process, state string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return process{}, "", false
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return process{}, "", false
	}
	fields := strings.Fields(s[closing+1:]) // from the 3rd field, state, on
	if len(fields) < 20 {
		return process{}, "", false
	}
	p = process{pid: pid, comm: s[open+1 : closing]}
	p.ppid, _ = strconv.Atoi(fields[1])
	p.pgid, _ = strconv.Atoi(fields[2])
	p.start, _ = strconv.ParseUint(fields[19], 10, 64)
	return p, fields[0], true
}

// tree returns the script's process and all its descendants.
func (s *script) tree() []process {
	all := processes()
	children := map[int][]int{}
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var out []process
	queue := []int{s.cmd.Process.Pid}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if p, ok := all[pid]; ok {
			out = append(out, p)
			queue = append(queue, children[pid]...)
		}
	}
	return out
}

// marked lists the processes whose environment holds the script's mark:
// every process it started, also one that left its parent.
func (s *script) marked() []string {
	var out []string
	want := []byte("FERRY_RUN_TEST_MARK=" + s.mark + "\x00")
	for pid, p := range processes() {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(append(env, 0), want) {
			out = append(out, fmt.Sprintf("%d %s", pid, p.comm))
		}
	}
	return out
}

// requireParts checks that the tree holds the stack's processes: what
// requireGone then finds gone was there.
func requireParts(t *testing.T, tree []process) {
	t.Helper()
	comms := map[string]bool{}
	for _, p := range tree {
		comms[p.comm] = true
	}
	for _, want := range []string{"ferry", "ferry-worker", "ferry-server", "temporal", "etcd", "kube-apiserver", "kwok", "redis-server", "dex"} {
		require.True(t, comms[want], "process %s runs under hack/run.sh; found %v", want, comms)
	}
}

// requireGone checks that no process of the tree is left, nor any process
// group of it, nor any process with the script's mark.
func (s *script) requireGone(tree []process) {
	s.t.Helper()
	var left []string
	groups := map[int]bool{}
	for _, p := range tree {
		if now, ok := readProcess(p.pid); ok && now.start == p.start {
			left = append(left, fmt.Sprintf("%d %s", p.pid, p.comm))
		}
		groups[p.pgid] = true
	}
	for pgid := range groups {
		if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
			left = append(left, fmt.Sprintf("process group %d: %s", pgid, groupMembers(pgid)))
		}
	}
	left = append(left, s.marked()...)
	require.Empty(s.t, left, "processes of hack/run.sh left after it exited")
}

// groupMembers names the processes of a process group, zombies too (a
// signal to the group reaches them): pid, comm, state, parent, command line.
func groupMembers(pgid int) string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		p, state, ok := readStat(pid)
		if !ok || p.pgid != pgid {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %s state %s ppid %d (%s)", pid, p.comm, state, p.ppid,
			strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))))
	}
	if len(out) == 0 {
		return "none found under /proc"
	}
	return strings.Join(out, "; ")
}
