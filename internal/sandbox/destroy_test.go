package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestCloseLeavesNoProcess closes a Renderer whose pool holds a started
// gVisor sandbox, its renderer waiting, as a worker does when it stops:
// once Close returns, no process the sandbox started on the host is left,
// nor any process group of one (hack/run.sh's teardown checks the same),
// and nothing is left mounted in the state directory (a test's TempDir, as
// a worker's is beside its clone cache: a mount would keep it from being
// removed).
func TestCloseLeavesNoProcess(t *testing.T) {
	if _, err := exec.LookPath("runsc"); err != nil {
		t.Skip("runsc is not installed (Debian package runsc; .ci/run installs it)")
	}
	runner, err := New(ModeGVisor, t.TempDir(), GVisor{})
	if err != nil {
		t.Fatal(err)
	}
	g := runner.(*gvisor)
	if g.platform == "ptrace" {
		// runsc run reaps the sandbox and its gofer, but ptrace's stub
		// processes are the sandbox's children: once it is gone, init
		// reaps them, as soon as it gets to it.
		t.Skip("the runsc on PATH runs ptrace (Debian's offers no systrap): test with the tools cache's (FERRY_TOOLS_BIN, hack/tools.sh)")
	}
	before := descendants()
	r := testRenderer(t, runner, Limits{})
	r.Pool, r.PoolDir = 1, t.TempDir()
	waitFull(t, r)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := exec.Command(g.runsc, "--root", g.root, "list").Output()
		if err == nil && strings.Contains(string(out), " running ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("runsc lists no running container 2 minutes after the pool's start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var started []hostProcess
	for pid, p := range descendants() {
		if _, ok := before[pid]; !ok {
			started = append(started, p)
		}
	}
	if len(started) < 3 {
		t.Fatalf("the pooled sandbox runs %v on the host, want runsc run, its sandbox and its gofer", started)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	var left []string
	groups := map[int]bool{}
	for _, p := range started {
		if now, ok := readHostProcess(p.pid); ok && now.start == p.start {
			left = append(left, fmt.Sprintf("%d %s (%s)", p.pid, p.comm, now.state))
		}
		if p.pgid != syscall.Getpgrp() { // TestCloseEndsTheRendersUnderWay checks that none is the test's
			groups[p.pgid] = true
		}
	}
	for pgid := range groups {
		if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
			left = append(left, fmt.Sprintf("process group %d", pgid))
		}
	}
	if len(left) > 0 {
		t.Errorf("processes of the sandbox left after Close: %v", left)
	}
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	if dir := filepath.Dir(g.root); strings.Contains(string(mounts), " "+dir+"/") {
		t.Errorf("something is mounted under the state directory %s after Close", dir)
	}
}

// hostProcess is a process of the host as /proc/PID/stat tells it.
type hostProcess struct {
	pid, ppid, pgid int
	comm, state     string
	start           string // start time, in clock ticks after boot
}

func readHostProcess(pid int) (hostProcess, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return hostProcess{}, false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return hostProcess{}, false
	}
	// After the comm: state ppid pgrp session tty tpgid flags minflt
	// cminflt majflt cmajflt utime stime cutime cstime priority nice
	// num_threads itrealvalue starttime.
	f := strings.Fields(s[close+1:])
	if len(f) < 20 {
		return hostProcess{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	return hostProcess{pid: pid, ppid: ppid, pgid: pgid, comm: s[open+1 : close], state: f[0], start: f[19]}, true
}

// descendants are the processes under this one, by pid.
func descendants() map[int]hostProcess {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]hostProcess{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readHostProcess(pid); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	out := map[int]hostProcess{}
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			out[c.pid] = c
			queue = append(queue, c.pid)
		}
	}
	return out
}

// TestAnswerLineEndsTheRun runs, in each sandbox, a command that writes
// its answer line and then goes on: with Spec.AnswerLine the run ends with
// the line while the command still runs, as a render does not wait for its
// sandbox to end; Destroy then ends it.
func TestAnswerLineEndsTheRun(t *testing.T) {
	grace := answerGrace
	answerGrace = time.Second
	t.Cleanup(func() { answerGrace = grace })
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sb, err := r.(Starter).Start(Spec{
			Args: []string{"/bin/bash", "-c", "read line; echo \"answer to $line\"; echo more; exec sleep 600"}, Env: []string{"PATH=/usr/bin:/bin"},
			Mounts: shellMounts(), AnswerLine: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sb.Finish(t.Context(), strings.NewReader("request\n"))
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Stdout) != "answer to request\n" || res.ExitCode != 0 {
			t.Errorf("the run gave %q, exit status %d; want the answer line and 0", res.Stdout, res.ExitCode)
		}
		if !sb.Alive() {
			t.Error("the run waited for the command to end")
		}
		sb.Destroy()
		if sb.Alive() {
			t.Error("the command runs after Destroy")
		}
	})
}

// reaperEnv makes the test binary run TestCloseEndsTheRendersUnderWay as
// a worker runs, the reaper of its sandboxes' orphans (AdoptOrphans), in a
// process of its own: the package's other tests do not inherit that.
const reaperEnv = "FERRY_SANDBOX_REAPER"

// TestCloseEndsTheRendersUnderWay closes a Renderer while a render runs in
// its pooled sandbox, as a worker stops with an activity that outlived its
// stop timeout, then ends the orphans as the worker does: the render ends
// with ErrClosed, Close returns after it, and no process the render
// started is left, not even a dead one waiting to be reaped (the worker's
// exit would leave it to the host's init, which hack/run.sh's teardown
// found). None of them was in the renderer's process group.
func TestCloseEndsTheRendersUnderWay(t *testing.T) {
	if os.Getenv(reaperEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCloseEndsTheRendersUnderWay$", "-test.v")
		cmd.Env = append(os.Environ(), reaperEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		t.Logf("%s", out)
		return
	}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		orphans, err := AdoptOrphans(time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		defer orphans.Close(30 * time.Second)
		before := descendants()
		sr := tmpPluginRenderer(t, r, 1, 5*time.Minute)
		p := waitFull(t, sr)
		slow := tmpRepo(t, "app/sleep.cm")
		rendered := make(chan error, 1)
		go func() {
			_, err := sr.Render(context.Background(), slow, app.Source{Path: "app"}, render.Options{AppName: "slow"})
			rendered <- err
		}()
		for deadline := time.Now().Add(time.Minute); p.warm.Load() == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the render did not take the pool's sandbox within a minute")
			}
		}
		var started []hostProcess
		for pid, p := range descendants() {
			if _, ok := before[pid]; ok {
				continue
			}
			started = append(started, p)
			if p.pgid == syscall.Getpgrp() {
				// A signal to the worker's group (Ctrl-C in its terminal)
				// would reach it, before the worker can end it in order.
				t.Errorf("%d %s runs in the renderer's process group", p.pid, p.comm)
			}
		}
		if err := sr.Close(); err != nil {
			t.Fatal(err)
		}
		orphans.Close(30 * time.Second)
		select {
		case err := <-rendered:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("the render under way ended with %v, want ErrClosed", err)
			}
		default:
			t.Fatal("Close returned while a render was under way")
		}
		var left []string
		for _, p := range started {
			if now, ok := readHostProcess(p.pid); ok && now.start == p.start {
				left = append(left, fmt.Sprintf("%d %s (%s, parent %d)", p.pid, p.comm, now.state, now.ppid))
			}
		}
		for pid, p := range descendants() {
			if old, ok := before[pid]; !ok || old.start != p.start {
				left = append(left, fmt.Sprintf("%d %s (%s, started since)", p.pid, p.comm, p.state))
			}
		}
		if len(left) > 0 {
			t.Errorf("processes of the render left after Close: %v", left)
		}
	})
}
