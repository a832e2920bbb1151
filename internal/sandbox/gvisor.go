package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// GVisor says which runsc the gvisor mode runs, and on which platform.
type GVisor struct {
	// Runsc is the runsc executable; "" is runsc on PATH.
	Runsc string
	// Platform is runsc's --platform, one of Platforms; "" is systrap
	// where the runsc offers it, else ptrace.
	Platform string
}

// Platforms are the runsc platforms a worker may choose. systrap (runsc's
// default since 2023) and ptrace work without KVM; systrap costs far less
// per system call. Debian's runsc (0.0~20221219) offers only ptrace and
// kvm.
var Platforms = []string{"systrap", "ptrace", "kvm"}

// gvisor runs commands with runsc: a container per run from an OCI bundle
// made for it, with a read-only root of the given mounts, a tmpfs /tmp,
// no network, nobody's user, no capabilities and the memory limit as its
// cgroup's.
type gvisor struct {
	runsc    string
	platform string
	root     string // runsc's state (--root)
	bundles  string
	// flags are the global flags of every runsc command beyond --root.
	flags []string
}

// sharedRoot is the --shared-root of the runscs that have one: a current
// runsc pins an empty network namespace for its gofers there (a bind
// mount, null-netns) and every later start joins it, which saves about
// 0.3 s a start on this project's machines. It is one directory of the
// host's, as runsc's default /var/run/runsc is, rather than under a
// worker's state directory: a worker that is killed (SIGKILL) cannot
// unmount it, and a mount there would keep the directory from being
// removed (EBUSY), by the next worker's sweep or by a test's cleanup.
var sharedRoot = filepath.Join("/run", "ferry", "runsc")

func newGVisor(stateDir string, opts GVisor) (*gvisor, error) {
	name := opts.Runsc
	if name == "" {
		name = "runsc"
	}
	runsc, err := exec.LookPath(name)
	if err != nil {
		if opts.Runsc != "" {
			return nil, fmt.Errorf("render sandbox gvisor: --runsc %s: %w", opts.Runsc, err)
		}
		return nil, errors.New("render sandbox gvisor needs runsc on PATH (Debian package runsc), or --runsc")
	}
	if stateDir == "" {
		return nil, errors.New("render sandbox gvisor needs a state directory")
	}
	if opts.Platform != "" && !slices.Contains(Platforms, opts.Platform) {
		return nil, fmt.Errorf("render sandbox gvisor: --runsc-platform %q: write one of %s", opts.Platform, strings.Join(Platforms, ", "))
	}
	help := runscFlags(runsc)
	platform := opts.Platform
	if platform == "" {
		platform = "ptrace"
		if strings.Contains(help["platform"], "systrap") {
			platform = "systrap"
		}
	}
	g := &gvisor{runsc: runsc, platform: platform, root: filepath.Join(stateDir, "runsc"), bundles: filepath.Join(stateDir, "bundles")}
	g.flags = []string{"--platform=" + platform, "--network=none"}
	if _, ok := help["shared-root"]; ok && os.MkdirAll(sharedRoot, 0o700) == nil {
		g.flags = append(g.flags, "--shared-root="+sharedRoot)
	}
	for _, dir := range []string{g.root, g.bundles} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("render sandbox gvisor: %w", err)
		}
	}
	return g, nil
}

func (g *gvisor) Mode() Mode { return ModeGVisor }

// runscFlags are the global flags runsc offers (runsc flags), each with
// its description: which platforms, whether --shared-root exists.
func runscFlags(runsc string) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, runsc, "flags")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	out, _ := cmd.CombinedOutput()
	flags := map[string]string{}
	name := ""
	for _, line := range strings.Split(string(out), "\n") {
		if f, ok := strings.CutPrefix(line, "  -"); ok {
			name, _, _ = strings.Cut(f, " ")
			flags[name] = ""
		} else if name != "" {
			flags[name] += strings.TrimSpace(line) + " "
		}
	}
	return flags
}

// Platform is the runsc platform of r when it is a gvisor Runner, else "".
func Platform(r Runner) string {
	if g, ok := r.(*gvisor); ok {
		return g.platform
	}
	return ""
}

func (g *gvisor) Run(ctx context.Context, spec Spec) (*Result, error) {
	return runStarted(ctx, g, spec)
}

// Start makes the run's bundle and starts runsc run on it; the container's
// command then waits for its stdin.
func (g *gvisor) Start(spec Spec) (Sandbox, error) {
	if err := checkSpec(spec); err != nil {
		return nil, err
	}
	l := spec.Limits.withDefaults()
	id := runID()
	bundle := filepath.Join(g.bundles, id)
	if err := os.MkdirAll(filepath.Join(bundle, "rootfs"), 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: bundle: %w", err)
	}
	config, err := json.Marshal(ociConfig(spec, l))
	if err == nil {
		err = os.WriteFile(filepath.Join(bundle, "config.json"), config, 0o600)
	}
	if err != nil {
		_ = os.RemoveAll(bundle)
		return nil, fmt.Errorf("sandbox: bundle: %w", err)
	}
	run := []string{"run", "--bundle", bundle, id}
	if slices.ContainsFunc(spec.Mounts, func(m Mount) bool { return m.Sockets }) {
		// Only this run's mounts are the host's files it sees.
		run = append([]string{"--host-uds=open"}, run...)
	}
	return launch(g.runsc, g.args(run...), runscEnv, spec, l, gvisorResult, g.stop(id), nil, func() { g.cleanup(id, bundle) })
}

// runscEnv is the environment of every runsc command.
var runscEnv = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}

// args are the arguments of runsc command args on g's state.
func (g *gvisor) args(args ...string) []string {
	return append(append([]string{"--root", g.root}, g.flags...), args...)
}

// stop ends the container id that runsc run runs: it kills the
// container's command, and runsc run then ends the sandbox and reaps its
// processes (the sandbox's and the gofer's) before it exits. Killing runsc
// run itself would leave them to init, dying, after the worker (and
// hack/run.sh) is gone. Where the container cannot be signalled (not
// created yet, or ending already: a run that ended at its answer line),
// launch kills runsc run when it has not exited within its WaitDelay, and
// cleanup deletes what is left.
func (g *gvisor) stop(id string) func(*exec.Cmd) error {
	return func(*exec.Cmd) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, g.runsc, g.args("kill", id, "KILL")...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as launch's
		cmd.Env = runscEnv
		_ = cmd.Run()
		return nil
	}
}

// gvisorResult reads how a container ended. The cgroup's OOM killer ends
// the sandbox with SIGKILL, or, when it picks another of runsc's
// processes, ends the run without a word on stdout or stderr. Nothing else
// does that when the run's context has not ended and stdout did not
// overflow: the command's own failures say something. A command that gets
// ENOMEM near the limit says so, as under bwrap.
func gvisorResult(res *Result, _ error) (*Result, error) {
	code := res.ExitCode
	silent := len(res.Stdout) == 0 && len(res.Stderr) == 0
	res.OutOfMemory = !res.StdoutOverflow && (code == 128+9 || code != 0 && (silent || saysOutOfMemory(res.Stderr)))
	return res, nil
}

// cleanup removes the container, also when it still runs (a timeout), and
// its bundle.
func (g *gvisor) cleanup(id, bundle string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.runsc, g.args("delete", "--force", id)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as launch's
	cmd.Env = runscEnv
	_ = cmd.Run() // a container that exited is gone already
	_ = os.RemoveAll(bundle)
}

// unmountNullNetNS unmounts the empty network namespace that a current
// runsc pins in its state root (root/null-netns, a bind mount shared by
// its sandboxes' gofers) when it runs without --shared-root (sharedRoot),
// so that the root can be removed; runsc stacks one mount per concurrent
// start, so it unmounts until none is left.
func unmountNullNetNS(root string) {
	path := filepath.Join(root, "null-netns")
	for syscall.Unmount(path, syscall.MNT_DETACH) == nil {
	}
}

// The parts of an OCI runtime config that a run sets.
type (
	ociSpec struct {
		Version  string     `json:"ociVersion"`
		Process  ociProcess `json:"process"`
		Root     ociRoot    `json:"root"`
		Hostname string     `json:"hostname"`
		Mounts   []ociMount `json:"mounts"`
		Linux    ociLinux   `json:"linux"`
	}
	ociProcess struct {
		User            ociUser     `json:"user"`
		Args            []string    `json:"args"`
		Env             []string    `json:"env"`
		Cwd             string      `json:"cwd"`
		Capabilities    struct{}    `json:"capabilities"`
		Rlimits         []ociRlimit `json:"rlimits"`
		NoNewPrivileges bool        `json:"noNewPrivileges"`
	}
	ociUser struct {
		UID int `json:"uid"`
		GID int `json:"gid"`
	}
	ociRlimit struct {
		Type string `json:"type"`
		Hard uint64 `json:"hard"`
		Soft uint64 `json:"soft"`
	}
	ociRoot struct {
		Path     string `json:"path"`
		Readonly bool   `json:"readonly"`
	}
	ociMount struct {
		Destination string   `json:"destination"`
		Type        string   `json:"type"`
		Source      string   `json:"source"`
		Options     []string `json:"options,omitempty"`
	}
	ociLinux struct {
		Namespaces []ociNamespace `json:"namespaces"`
		Resources  ociResources   `json:"resources"`
	}
	ociNamespace struct {
		Type string `json:"type"`
	}
	ociResources struct {
		Memory struct {
			Limit int64 `json:"limit"`
		} `json:"memory"`
		Pids struct {
			Limit int64 `json:"limit"`
		} `json:"pids"`
	}
)

func ociConfig(spec Spec, l Limits) ociSpec {
	cpu := uint64((l.CPUTime + time.Second - 1) / time.Second)
	s := ociSpec{
		Version: "1.0.0",
		Process: ociProcess{
			User: ociUser{UID: sandboxUID, GID: sandboxUID},
			Args: spec.Args, Env: spec.Env, Cwd: dirOf(spec),
			Rlimits: []ociRlimit{
				{Type: "RLIMIT_NOFILE", Hard: 1024, Soft: 1024},
				{Type: "RLIMIT_CPU", Hard: cpu, Soft: cpu},
				{Type: "RLIMIT_FSIZE", Hard: uint64(l.Tmpfs), Soft: uint64(l.Tmpfs)},
				{Type: "RLIMIT_CORE", Hard: 0, Soft: 0},
			},
			NoNewPrivileges: true,
		},
		Root:     ociRoot{Path: "rootfs", Readonly: true},
		Hostname: "sandbox",
		Mounts: []ociMount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=64k"}},
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777", "size=" + strconv.FormatInt(l.Tmpfs, 10)}},
		},
	}
	for _, m := range spec.Scratch {
		s.Mounts = append(s.Mounts, ociMount{Destination: m.Target, Type: "tmpfs", Source: "tmpfs",
			Options: []string{"nosuid", "nodev", "mode=755", "uid=" + strconv.Itoa(sandboxUID), "gid=" + strconv.Itoa(sandboxUID), "size=" + strconv.FormatInt(m.Size, 10)}})
	}
	for _, m := range spec.Mounts {
		s.Mounts = append(s.Mounts, ociMount{Destination: m.Target, Type: "bind", Source: m.Source, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
	}
	for _, ns := range []string{"pid", "network", "ipc", "uts", "mount"} {
		s.Linux.Namespaces = append(s.Linux.Namespaces, ociNamespace{Type: ns})
	}
	s.Linux.Resources.Memory.Limit = l.Memory
	s.Linux.Resources.Pids.Limit = processLimit
	return s
}
