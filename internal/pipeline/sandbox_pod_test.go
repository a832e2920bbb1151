package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

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
	s := Sandbox{Mode: sandbox.ModePod, StateDir: stateDir(t)}

	_, err := NewRenderer(&render.Renderer{}, s)
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

	settings := &render.Renderer{}
	r, err := NewRenderer(settings, s)
	require.NoError(t, err, "on gVisor (%s)", out)
	assert.Same(t, settings, r.SourceRenderer, "renders run in the worker's process, which gVisor runs")
	assert.Equal(t, sandbox.ModePod, r.Mode)
	assert.Empty(t, r.Platform)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/cm.yaml", []byte("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: cm}\nspec:\n  generate: {command: [sh, -c, 'echo {}']}\n"), 0o644))
	plugins, err := render.LoadPlugins(dir)
	require.NoError(t, err)
	s.PluginDir = dir
	_, err = NewRenderer(&render.Renderer{Plugins: plugins}, s)
	require.Error(t, err, "plugins run any program: not in the worker's pod")
	assert.ErrorContains(t, err, "--plugin-dir "+dir)
	assert.ErrorContains(t, err, "the worker's credentials")
	s.PluginDir = ""

	s.Mode = sandbox.ModeGVisor
	_, err = NewRenderer(&render.Renderer{}, s)
	require.Error(t, err)
	assert.ErrorContains(t, err, "runsc does not run nested; choose pod")
}
