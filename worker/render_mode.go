package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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
	if err := sandbox.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
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
// ferry_render_sandbox_info{mode}.
func newSandboxRenderer(cfg *config, settings *render.Renderer, reg prometheus.Registerer) (manifests.SourceRenderer, error) {
	mode := cfg.render.sandbox.mode
	if mode == "" {
		var err error
		if mode, err = sandbox.DefaultMode(); err != nil {
			return nil, err
		}
	}
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "ferry_render_sandbox_info", Help: "The render sandbox in force (--render-sandbox): gvisor, process or none.",
	}, []string{"mode"})
	reg.MustRegister(info)
	info.WithLabelValues(string(mode)).Set(1)
	if mode == sandbox.ModeNone && len(settings.Plugins) > 0 {
		return nil, fmt.Errorf("--plugin-dir %s: config-management plugins run only in a render sandbox, and --render-sandbox is none; "+
			"choose gvisor or process, or drop --plugin-dir", cfg.render.pluginDir)
	}
	if mode == sandbox.ModeNone {
		slog.Warn("render sandbox: none, for development only: renders run in the worker's own process, " +
			"where a commit can exhaust the worker's memory or read its environment and files")
		return settings, nil
	}
	if settings.AllowRemoteBases {
		return nil, fmt.Errorf("--kustomize-allow-remote-bases: a render sandbox (%s) has no network, so Kustomize cannot fetch remote bases in it; "+
			"drop the flag, or give --render-sandbox none (development only)", mode)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("render sandbox %s: find the worker's own binary: %w", mode, err)
	}
	// Workers sharing the directory beside their clone caches each get one
	// of their own in it; what dead ones left is swept first.
	state, err := sandbox.ClaimState(filepath.Join(filepath.Dir(cfg.cacheDir), "sandbox"))
	if err != nil {
		return nil, fmt.Errorf("render sandbox %s: %w", mode, err)
	}
	runner, err := sandbox.New(mode, state.Dir)
	if err != nil {
		_ = state.Close()
		return nil, fmt.Errorf("%w; or choose another with --render-sandbox", err)
	}
	memory := int64(cfg.render.memory)
	if memory <= 0 {
		memory = defaultRenderMemory
	}
	r := &sandbox.Renderer{Runner: runner, Binary: self, Settings: settings,
		Limits: sandbox.Limits{Memory: memory}, MemoryFlag: memoryFlagName, PluginDir: cfg.render.pluginDir,
		Pool: cfg.render.pool, PoolDir: state.Dir, State: state}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	if err := r.Probe(ctx); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("render sandbox %s does not work on this machine: %w; choose another with --render-sandbox (gvisor, process, or none for development)", mode, err)
	}
	r.Warm()
	slog.Info("render sandbox: "+string(mode), "memory", resource.NewQuantity(memory, resource.BinarySI).String(),
		"pool", cfg.render.pool, "state", state.Dir, "probe", time.Since(start).Round(time.Millisecond),
		"swept_containers", state.SweptContainers, "swept_dirs", state.SweptDirs)
	return r, nil
}

// defaultSandboxPool is --render-sandbox-pool's default.
const defaultSandboxPool = 2

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
