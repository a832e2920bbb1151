package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// renderMode is ferry-worker render: the renderer process that a sandbox
// runs, one request on stdin, its answer on stdout (see sandbox.Serve).
func renderMode() int {
	if err := sandbox.Serve(context.Background(), os.Args[2:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ferry-worker render:", err)
		return 1
	}
	return 0
}

// memoryFlagName raises the memory of one render; sandbox errors name it.
const memoryFlagName = "--render-memory"

// defaultRenderMemory is --render-memory's default.
const defaultRenderMemory = 1 << 30

// newSandboxRenderer wraps settings in the sandbox that --render-sandbox
// chooses (by default the strongest one installed), checks that it works
// here, logs the mode in force and exports it as
// ferry_render_sandbox_info{mode,platform} (platform: gvisor's runsc
// platform, else empty).
func newSandboxRenderer(cfg *config, settings *render.Renderer, reg prometheus.Registerer) (manifests.SourceRenderer, error) {
	mode := cfg.render.sandbox.mode
	if mode == "" {
		var err error
		if mode, err = sandbox.DefaultMode(cfg.render.runsc); err != nil {
			return nil, err
		}
	}
	info := newSandboxInfo(reg)
	if err := checkSandboxHere(cfg, mode, settings); err != nil {
		return nil, err
	}
	if mode == sandbox.ModePod {
		return podRenderer(settings, info), nil
	}
	if mode == sandbox.ModeNone && len(settings.Plugins) > 0 {
		return nil, fmt.Errorf("--plugin-dir %s: config-management plugins run only in a render sandbox, and --render-sandbox is none; "+
			"choose gvisor or process, or drop --plugin-dir", cfg.render.pluginDir)
	}
	if mode == sandbox.ModeNone {
		info.WithLabelValues(string(mode), "").Set(1)
		slog.Warn("render sandbox: none, for development only: renders run in the worker's own process, " +
			"where a commit can exhaust the worker's memory or read its environment and files")
		return settings, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("render sandbox %s: find the worker's own binary: %w", mode, err)
	}
	// Workers sharing the directory beside their clone caches each get one
	// of their own in it; what dead ones left is swept first.
	state, err := sandbox.ClaimState(filepath.Join(filepath.Dir(cfg.cacheDir), "sandbox"), cfg.render.runsc)
	if err != nil {
		return nil, fmt.Errorf("render sandbox %s: %w", mode, err)
	}
	memory := int64(cfg.render.memory)
	if memory <= 0 {
		memory = defaultRenderMemory
	}
	r := &sandbox.Renderer{Binary: sandbox.RendererBinary(self), Settings: settings,
		Limits: sandbox.Limits{Memory: memory}, MemoryFlag: memoryFlagName, PluginDir: cfg.render.pluginDir,
		Pool: cfg.render.pool, Reuse: cfg.render.reuse, PoolDir: state.Dir, State: state}
	start := time.Now()
	if err := probeSandbox(cfg, mode, state, r); err != nil {
		_ = r.Close()
		return nil, err
	}
	if err := sandbox.BoundsWhole(r.Runner); err != nil && len(settings.Plugins) > 0 {
		_ = r.Close()
		return nil, fmt.Errorf("--plugin-dir %s: a plugin may start any number of processes, and %w; "+
			"let the worker manage a cgroup (cgroup v2 with the memory and pids controllers delegated to its cgroup, or writable cgroup v1 memory and pids hierarchies), "+
			"choose --render-sandbox gvisor, or drop --plugin-dir", cfg.render.pluginDir, err)
	} else if err != nil {
		slog.Warn("render sandbox process: each render process's memory, CPU time and file size are bounded, not their sum nor their number; "+
			"renders run one process, and plugins are refused", "reason", err)
	}
	r.Warm()
	platform := sandbox.Platform(r.Runner)
	info.WithLabelValues(string(mode), platform).Set(1)
	attrs := []any{"renderer", r.Binary, "memory", resource.NewQuantity(memory, resource.BinarySI).String(),
		"pool", cfg.render.pool, "reuse", cfg.render.reuse, "state", state.Dir, "probe", time.Since(start).Round(time.Millisecond),
		"swept_containers", state.SweptContainers, "swept_dirs", state.SweptDirs}
	if platform != "" {
		attrs = append([]any{"platform", platform, "runsc", runscPath(cfg)}, attrs...)
	}
	slog.Info("render sandbox: "+string(mode), attrs...)
	return r, nil
}

// probeSandbox gives r the Runner of mode and checks that it works here.
// gvisor without --runsc-platform tries its default platform (systrap
// where the runsc offers it) and, when that does not work here, ptrace.
func probeSandbox(cfg *config, mode sandbox.Mode, state *sandbox.State, r *sandbox.Renderer) error {
	gv := sandbox.GVisor{Runsc: cfg.render.runsc, Platform: cfg.render.runscPlatform}
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

// runscPath is the runsc --render-sandbox gvisor runs, for the log.
func runscPath(cfg *config) string {
	name := cfg.render.runsc
	if name == "" {
		name = "runsc"
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}

// defaultSandboxPool is --render-sandbox-pool's default.
const defaultSandboxPool = 2

// defaultSandboxReuse is --render-sandbox-reuse's default: a new commit
// of a repository that 100 apps render starts one sandbox, not 100.
const defaultSandboxReuse = 100

// sandboxFlag is --render-sandbox: a sandbox.Mode; empty means the
// default.
type sandboxFlag struct{ mode sandbox.Mode }

func (f *sandboxFlag) String() string { return string(f.mode) }
func (f *sandboxFlag) Set(v string) error {
	m, err := sandbox.ParseMode(v)
	if err != nil {
		return err
	}
	f.mode = m
	return nil
}

// bytesFlag is a size in bytes written as a Kubernetes quantity: 512Mi,
// 2Gi.
type bytesFlag int64

func (b *bytesFlag) String() string {
	return resource.NewQuantity(int64(*b), resource.BinarySI).String()
}

func (b *bytesFlag) Set(v string) error {
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		return fmt.Errorf("%q is not a size: write one such as 512Mi or 2Gi", v)
	}
	*b = bytesFlag(q.Value())
	return nil
}

// newSandboxInfo is the metric that names the render sandbox in force.
func newSandboxInfo(reg prometheus.Registerer) *prometheus.GaugeVec {
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ferry_render_sandbox_info", Help: "The render sandbox in force (--render-sandbox): gvisor, process, pod or none; for gvisor, runsc's platform (--runsc-platform).",
	}, []string{"mode", "platform"})
	reg.MustRegister(info)
	return info
}
