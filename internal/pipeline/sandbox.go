package pipeline

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ferry-gitops/ferry/internal/egress"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// DefaultMemory is the memory of one sandboxed render when Sandbox.Memory
// is zero: the worker's --render-memory default.
const DefaultMemory = 1 << 30

// memoryFlag raises the memory of one render; sandbox errors name it.
const memoryFlag = "--render-memory"

// Sandbox describes the render sandbox, as the worker's flags set it; the
// errors of NewRenderer name those flags.
type Sandbox struct {
	// Mode is --render-sandbox; empty: the strongest one installed
	// (sandbox.DefaultMode).
	Mode sandbox.Mode
	// Runsc and RunscPlatform: the runsc of gvisor mode ("" is runsc on
	// PATH) and its platform ("": its default, else ptrace where that does
	// not work here).
	Runsc, RunscPlatform string
	// Binary is the renderer a sandbox runs; "": this process's own
	// executable (ferry-worker render).
	Binary string
	// StateDir is where the sandboxes keep their state, one locked
	// directory per process (sandbox.ClaimState). New defaults it to the
	// directory beside the Git clone cache.
	StateDir string
	// Memory bounds one render; zero: DefaultMemory.
	Memory int64
	// Pool and Reuse: how many sandboxes wait started, and how many
	// renders of one checkout one of them serves (sandbox.Renderer).
	Pool, Reuse int
	// PluginDir is --plugin-dir, whose bin/ the sandbox puts on the
	// plugins' PATH.
	PluginDir string
	// Egress are --plugin-egress's lists (sandbox.Renderer.Egress).
	Egress *egress.Rules
}

// Renderer is the renderer NewRenderer chose, and where it renders.
type Renderer struct {
	manifests.SourceRenderer
	// Mode is the sandbox in force; empty when the pipeline renders in
	// this process without a Sandbox.
	Mode sandbox.Mode
	// Platform is gvisor's runsc platform, else empty.
	Platform string
}

// Close stops the sandboxes of a pool.
func (r *Renderer) Close() error {
	if c, ok := r.SourceRenderer.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// NewRenderer wraps settings in the sandbox that s chooses, checks that it
// works here, and logs the mode in force. It refuses the sandboxes that
// cannot hold where it runs (checkSandboxHere), and plugins where nothing
// bounds what they start.
func NewRenderer(settings *render.Renderer, s Sandbox) (*Renderer, error) {
	mode := s.Mode
	if mode == "" {
		var err error
		if mode, err = sandbox.DefaultMode(s.Runsc); err != nil {
			return nil, err
		}
	}
	if err := checkSandboxHere(mode, settings, s.PluginDir); err != nil {
		return nil, err
	}
	if mode == sandbox.ModePod {
		slog.Info("render sandbox: pod: renders run in the worker's process, on the gVisor kernel of its pod: " +
			"a commit reaches no node's kernel, but can use the worker's memory and CPU up to the pod's limits")
		return &Renderer{SourceRenderer: settings, Mode: mode}, nil
	}
	if mode == sandbox.ModeNone && len(settings.Plugins) > 0 {
		return nil, fmt.Errorf("--plugin-dir %s: config-management plugins run only in a render sandbox, and --render-sandbox is none; "+
			"choose gvisor or process, or drop --plugin-dir", s.PluginDir)
	}
	if mode == sandbox.ModeNone {
		slog.Warn("render sandbox: none, for development only: renders run in the worker's own process, " +
			"where a commit can exhaust the worker's memory or read its environment and files")
		return &Renderer{SourceRenderer: settings, Mode: mode}, nil
	}
	binary := s.Binary
	if binary == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("render sandbox %s: find the worker's own binary: %w", mode, err)
		}
		binary = self
	}
	// What dead workers left is swept first.
	state, err := sandbox.ClaimState(s.StateDir, s.Runsc)
	if err != nil {
		return nil, fmt.Errorf("render sandbox %s: %w", mode, err)
	}
	memory := s.Memory
	if memory <= 0 {
		memory = DefaultMemory
	}
	r := &sandbox.Renderer{Binary: sandbox.RendererBinary(binary), Settings: settings,
		Limits: sandbox.Limits{Memory: memory}, MemoryFlag: memoryFlag, PluginDir: s.PluginDir, Egress: s.Egress,
		Pool: s.Pool, Reuse: s.Reuse, PoolDir: state.Dir, State: state}
	start := time.Now()
	if err := probeSandbox(s, mode, state, r); err != nil {
		_ = r.Close()
		return nil, err
	}
	if err := sandbox.BoundsWhole(r.Runner); err != nil && len(settings.Plugins) > 0 {
		_ = r.Close()
		return nil, fmt.Errorf("--plugin-dir %s: a plugin may start any number of processes, and %w; "+
			"let the worker manage a cgroup (cgroup v2 with the memory and pids controllers delegated to its cgroup, or writable cgroup v1 memory and pids hierarchies), "+
			"choose --render-sandbox gvisor, or drop --plugin-dir", s.PluginDir, err)
	} else if err != nil {
		slog.Warn("render sandbox process: each render process's memory, CPU time and file size are bounded, not their sum nor their number; "+
			"renders run one process, and plugins are refused", "reason", err)
	}
	r.Warm()
	platform := sandbox.Platform(r.Runner)
	attrs := []any{"renderer", r.Binary, "memory", resource.NewQuantity(memory, resource.BinarySI).String(),
		"pool", s.Pool, "reuse", s.Reuse, "state", state.Dir, "probe", time.Since(start).Round(time.Millisecond),
		"swept_containers", state.SweptContainers, "swept_dirs", state.SweptDirs}
	if platform != "" {
		attrs = append([]any{"platform", platform, "runsc", runscPath(s.Runsc)}, attrs...)
	}
	slog.Info("render sandbox: "+string(mode), attrs...)
	return &Renderer{SourceRenderer: r, Mode: mode, Platform: platform}, nil
}

// probeSandbox gives r the Runner of mode and checks that it works here.
// gvisor without a platform tries its default platform (systrap where the
// runsc offers it) and, when that does not work here, ptrace.
func probeSandbox(s Sandbox, mode sandbox.Mode, state *sandbox.State, r *sandbox.Renderer) error {
	gv := sandbox.GVisor{Runsc: s.Runsc, Platform: s.RunscPlatform}
	for {
		runner, err := sandbox.New(mode, state.Dir, gv)
		if err != nil {
			return fmt.Errorf("%w; or choose another with --render-sandbox", err)
		}
		r.Runner = runner
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = r.Probe(ctx)
		cancel()
		if err == nil {
			return nil
		}
		platform := sandbox.Platform(runner)
		if mode == sandbox.ModeGVisor && gv.Platform == "" && platform != "ptrace" {
			slog.Warn("render sandbox gvisor: runsc's "+platform+" platform does not work here, trying ptrace", "error", err)
			gv.Platform = "ptrace"
			continue
		}
		if platform != "" {
			return fmt.Errorf("render sandbox %s (runsc platform %s) does not work on this machine: %w; choose another with --runsc-platform or --render-sandbox (gvisor, process, or none for development)", mode, platform, err)
		}
		return fmt.Errorf("render sandbox %s does not work on this machine: %w; choose another with --render-sandbox (gvisor, process, or none for development)", mode, err)
	}
}

// runscPath is the runsc that gvisor mode runs, for the log.
func runscPath(name string) string {
	if name == "" {
		name = "runsc"
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

// procVersion is where the worker reads which kernel runs it.
var procVersion = "/proc/version"

// checkSandboxHere refuses the modes that cannot hold where the worker
// runs: pod outside gVisor (renders would run in an unsandboxed process,
// silently) or with plugins (which run any program: in the worker's pod
// they would have its network and credentials), and gvisor inside gVisor
// (runsc does not run nested).
func checkSandboxHere(mode sandbox.Mode, settings *render.Renderer, pluginDir string) error {
	switch mode {
	case sandbox.ModePod:
		if len(settings.Plugins) > 0 {
			return fmt.Errorf("--plugin-dir %s: config-management plugins run only in a render sandbox of their own, and --render-sandbox pod renders in the worker's process, "+
				"where a plugin would have the pod's network and the worker's credentials; choose gvisor or process, or drop --plugin-dir", pluginDir)
		}
		if err := sandbox.UnderGVisor(procVersion); err != nil {
			return fmt.Errorf("--render-sandbox pod: the pod is the render sandbox only when gVisor runs it, and %w; "+
				"run the worker in a pod of a RuntimeClass whose handler is runsc (deploy/: runtimeClassName: gvisor), or choose gvisor or process", err)
		}
	case sandbox.ModeGVisor:
		if sandbox.UnderGVisor(procVersion) == nil {
			return fmt.Errorf("--render-sandbox gvisor: this worker runs on gVisor already, where runsc does not run nested; choose pod (the pod's gVisor is the render sandbox)")
		}
	}
	return nil
}
