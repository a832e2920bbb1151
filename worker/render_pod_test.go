package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// TestPodSandboxOnlyUnderGVisor: --render-sandbox pod trusts the pod only
// where gVisor runs the worker. On this machine's kernel it refuses to
// start; with the /proc/version that gVisor gives (read under runsc) it
// renders in process and says so; with plugins it refuses anywhere; and
// gvisor mode is refused inside gVisor, where runsc cannot nest.
func TestPodSandboxOnlyUnderGVisor(t *testing.T) {
	cfg := &config{cacheDir: t.TempDir() + "/repos"}
	cfg.render.sandbox.mode = sandbox.ModePod

	_, err := newSandboxRenderer(cfg, &render.Renderer{}, prometheus.NewRegistry())
	require.Error(t, err, "a worker that gVisor does not run has no sandbox in pod mode")
	assert.ErrorContains(t, err, "--render-sandbox pod")
	assert.ErrorContains(t, err, "does not run on gVisor")
	assert.ErrorContains(t, err, "runtimeClassName: gvisor")

	// What gVisor's kernel says, read from inside a runsc sandbox.
	runsc, err := exec.LookPath("runsc")
	require.NoError(t, err, "runsc (gVisor) must be on PATH")
	out, err := exec.Command(runsc, "--network=none", "--root", t.TempDir(), "do", "cat", "/proc/version").Output()
	require.NoError(t, err, "runsc do cat /proc/version")
	gvisorVersion := filepath.Join(t.TempDir(), "version")
	require.NoError(t, os.WriteFile(gvisorVersion, out, 0o644))
	old := procVersion
	procVersion = gvisorVersion
	t.Cleanup(func() { procVersion = old })

	reg := prometheus.NewRegistry()
	r, err := newSandboxRenderer(cfg, &render.Renderer{}, reg)
	require.NoError(t, err, "on gVisor (%s)", out)
	_, isSettings := r.(*render.Renderer)
	assert.True(t, isSettings, "renders run in the worker's process, which gVisor runs")
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ferry_render_sandbox_info The render sandbox in force (--render-sandbox): gvisor, process, pod or none; for gvisor, runsc's platform (--runsc-platform).
# TYPE ferry_render_sandbox_info gauge
ferry_render_sandbox_info{mode="pod",platform=""} 1
`), "ferry_render_sandbox_info"))

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/cm.yaml", []byte("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: cm}\nspec:\n  generate: {command: [sh, -c, 'echo {}']}\n"), 0o644))
	plugins, err := render.LoadPlugins(dir)
	require.NoError(t, err)
	cfg.render.pluginDir = dir
	_, err = newSandboxRenderer(cfg, &render.Renderer{Plugins: plugins}, prometheus.NewRegistry())
	require.Error(t, err, "plugins run any program: not in the worker's pod")
	assert.ErrorContains(t, err, "--plugin-dir "+dir)
	assert.ErrorContains(t, err, "the worker's credentials")
	cfg.render.pluginDir = ""

	cfg.render.sandbox.mode = sandbox.ModeGVisor
	_, err = newSandboxRenderer(cfg, &render.Renderer{}, prometheus.NewRegistry())
	require.Error(t, err)
	assert.ErrorContains(t, err, "runsc does not run nested; choose pod")
}
