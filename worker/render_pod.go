package main

import (
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// procVersion is where the worker reads which kernel runs it.
var procVersion = "/proc/version"

// checkSandboxHere refuses the modes that cannot hold where the worker
// runs: pod outside gVisor (renders would run in an unsandboxed process,
// silently) or with plugins (which run any program: in the worker's pod
// they would have its network and credentials), and gvisor inside gVisor
// (runsc does not run nested).
func checkSandboxHere(cfg *config, mode sandbox.Mode, settings *render.Renderer) error {
	switch mode {
	case sandbox.ModePod:
		if len(settings.Plugins) > 0 {
			return fmt.Errorf("--plugin-dir %s: config-management plugins run only in a render sandbox of their own, and --render-sandbox pod renders in the worker's process, "+
				"where a plugin would have the pod's network and the worker's credentials; choose gvisor or process, or drop --plugin-dir", cfg.render.pluginDir)
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

// podRenderer renders in the worker's process, which gVisor runs
// (checkSandboxHere said so).
func podRenderer(settings *render.Renderer, info *prometheus.GaugeVec) manifests.SourceRenderer {
	info.WithLabelValues(string(sandbox.ModePod), "").Set(1)
	slog.Info("render sandbox: pod: renders run in the worker's process, on the gVisor kernel of its pod: " +
		"a commit reaches no node's kernel, but can use the worker's memory and CPU up to the pod's limits")
	return settings
}
