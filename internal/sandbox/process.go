package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// sandboxUID is the user (and group) commands run as inside a sandbox:
// nobody.
const sandboxUID = 65534

// process runs commands with bwrap: their own user, PID, network, IPC,
// UTS and cgroup namespaces, no further user namespaces, a seccomp filter
// (seccompPolicy), a read-only root of the given mounts, rlimits that
// prlimit sets before bwrap starts (they are inherited across exec and
// namespaces), and a cgroup of their own that bounds the memory and the
// processes of the whole sandbox, where the kernel gives one (cgroups).
type process struct {
	bwrap, prlimit string
	// cgroups is nil where no cgroup can be had; cgroupErr says why.
	cgroups   *cgroups
	cgroupErr error
}

func newProcess() (*process, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errors.New("render sandbox process needs bwrap on PATH (Debian package bubblewrap)")
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, errors.New("render sandbox process needs prlimit on PATH (Debian package util-linux)")
	}
	if _, err := seccompProgram(); err != nil {
		return nil, fmt.Errorf("render sandbox process: %w", err)
	}
	p := &process{bwrap: bwrap, prlimit: prlimit}
	p.cgroups, p.cgroupErr = findCgroups()
	return p, nil
}

// BoundsWhole is nil when r bounds the memory and the number of
// processes of each sandbox as a whole: gVisor always, process mode with a
// cgroup. Else it says why not: a process sandbox without a cgroup bounds
// each process's memory (RLIMIT_DATA), CPU time and file size, not their
// sum nor their number, which holds a renderer (one process) but not a
// plugin (any number).
func BoundsWhole(r Runner) error {
	if p, ok := r.(*process); ok && p.cgroups == nil {
		return fmt.Errorf("the process sandbox has no cgroup of its own here: %w", p.cgroupErr)
	}
	return nil
}

func (p *process) Mode() Mode { return ModeProcess }

func (p *process) Run(ctx context.Context, spec Spec) (*Result, error) {
	return runStarted(ctx, p, spec)
}

// Start starts prlimit and bwrap; the command then waits for its stdin.
func (p *process) Start(spec Spec) (Sandbox, error) {
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	l := spec.Limits.withDefaults()
	var cg *cgroup
	if p.cgroups != nil {
		var err error
		if cg, err = p.cgroups.create(l.Memory, processLimit); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	filter, err := seccompFile()
	if err != nil {
		if cg != nil {
			cg.remove()
		}
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	cpu := int64((l.CPUTime + time.Second - 1) / time.Second)
	args := []string{
		// RLIMIT_DATA rather than RLIMIT_AS: Go reserves address space it
		// never uses, and RLIMIT_DATA counts only what a process writes.
		"--data=" + strconv.FormatInt(l.Memory, 10),
		"--cpu=" + strconv.FormatInt(cpu, 10),
		"--fsize=" + strconv.FormatInt(l.Tmpfs, 10),
		"--core=0",
		"--", p.bwrap,
		"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		// The filter is the command's first extra file, descriptor 3.
		"--seccomp", "3",
		"--uid", strconv.Itoa(sandboxUID), "--gid", strconv.Itoa(sandboxUID),
		"--clearenv",
	}
	for _, kv := range spec.Env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	args = append(args, "--size", strconv.FormatInt(l.Tmpfs, 10), "--tmpfs", "/tmp", "--proc", "/proc")
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"} {
		args = append(args, "--dev-bind", dev, dev)
	}
	for _, m := range spec.Scratch {
		args = append(args, "--size", strconv.FormatInt(m.Size, 10), "--tmpfs", m.Target)
	}
	for _, m := range spec.Mounts {
		args = append(args, "--ro-bind", m.Source, m.Target)
	}
	// bwrap's root is a tmpfs holding the mount points: read-only, so that
	// /tmp stays the only (bounded) place to write.
	args = append(args, "--remount-ro", "/", "--chdir", dirOf(spec), "--")
	args = append(args, spec.Args...)

	// prlimit and bwrap themselves hold only the sandbox's environment
	// too: bwrap's own process is PID 1 inside, and its environ readable.
	prepare := func(cmd *exec.Cmd) (func(), error) {
		cmd.ExtraFiles = []*os.File{filter}
		if cg == nil {
			return func() { _ = filter.Close() }, nil
		}
		placed, err := cg.place(cmd)
		if err != nil {
			_ = filter.Close()
			return nil, err
		}
		return func() { _ = filter.Close(); placed() }, nil
	}
	result := func(res *Result, _ error) (*Result, error) { return processResult(res, cg) }
	cleanup := func() {
		if cg != nil {
			cg.remove()
		}
	}
	return launch(p.prlimit, args, spec.Env, spec, l, result, nil, prepare, cleanup)
}

// processResult reads how a bwrap run ended: bwrap's own failures are
// errors, a command that could not get memory is out of memory, and so is
// a run any of whose processes the kernel killed at the cgroup's memory
// limit (cg, nil without one): a plugin's, whose renderer still answers.
func processResult(res *Result, cg *cgroup) (*Result, error) {
	if msg, failed := bwrapFailure(res); failed {
		return nil, fmt.Errorf("sandbox: bwrap could not make the sandbox (%s); the kernel or the container the worker runs in may forbid user namespaces: allow them, or choose another --render-sandbox", msg)
	}
	if i := bytes.Index(res.Stderr, []byte(joinFailure)); i >= 0 {
		return nil, fmt.Errorf("sandbox: %s", lastLines(res.Stderr[i:]))
	}
	if res.ExitCode != 0 {
		res.OutOfMemory = saysOutOfMemory(res.Stderr)
		if res.OutOfMemory && cg != nil && cg.processLimitHit() && !cg.oomKilled() && saysNoThread(res.Stderr) {
			// The thread was refused by the cgroup's process limit.
			res.OutOfMemory = false
		}
	}
	if cg != nil && cg.oomKilled() {
		res.OutOfMemory = true
	}
	return res, nil
}

// saysOutOfMemory tells a command that failed to get memory. Go's
// runtime says so in several ways, each ending with exit status 2 and a
// traceback:
//   - "fatal error: runtime: out of memory", "fatal error: out of memory
//     allocating heap arena metadata", "runtime: out of memory: cannot
//     allocate …": the heap could not grow;
//   - "fatal error: runtime: cannot allocate memory": the runtime's own
//     metadata (C programs say the same for ENOMEM);
//   - "runtime/cgo: pthread_create failed: Resource temporarily
//     unavailable" then "SIGABRT: abort": a cgo binary (the renderer is
//     one) needed a thread, and glibc could not map its stack within
//     RLIMIT_DATA (pthread_create reports that as EAGAIN);
//   - "runtime: failed to create new OS thread (… errno=12)": a thread
//     without cgo, ENOMEM (errno=11 would be a limit on processes).
//
// The sandbox's rlimits set no limit on threads or processes (prlimit
// above), so a cgo thread that could not get its stack is the memory
// limit's doing, unless the cgroup's process limit was reached
// (processResult).
func saysOutOfMemory(stderr []byte) bool {
	low := strings.ToLower(string(stderr))
	for _, says := range []string{"out of memory", "cannot allocate memory"} {
		if strings.Contains(low, says) {
			return true
		}
	}
	return saysNoThread(stderr) || strings.Contains(low, "failed to create new os thread") && strings.Contains(low, "errno=12)")
}

// saysNoThread tells a cgo binary that could not start a thread.
func saysNoThread(stderr []byte) bool {
	return strings.Contains(strings.ToLower(string(stderr)), "pthread_create failed: resource temporarily unavailable")
}

// bwrapFailure tells bwrap's own setup errors ("bwrap: …", exit status 1)
// from the command's.
func bwrapFailure(res *Result) (string, bool) {
	s := strings.TrimSpace(string(res.Stderr))
	if res.ExitCode != 1 || !strings.HasPrefix(s, "bwrap: ") {
		return "", false
	}
	return s, true
}

func dirOf(spec Spec) string {
	if spec.Dir == "" {
		return "/tmp"
	}
	return spec.Dir
}
