package pipeline

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// TestMain serves the render mode as the worker does (ferry-worker
// render), for the sandboxes the tests start with the test binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.RenderArg {
		if err := sandbox.Serve(context.Background(), os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "render:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The runsc of the tools cache (hack/tools.sh), as the stack's workers.
	if bin := os.Getenv("FERRY_TOOLS_BIN"); bin != "" {
		_ = os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	os.Exit(m.Run())
}

// stateDir is a sandbox state directory as a worker has it, beside its
// clone cache.
func stateDir(t *testing.T) string { return filepath.Join(t.TempDir(), "sandbox") }

// TestRenderSandboxChoice: with neither runsc nor bwrap the worker refuses
// to start unless --render-sandbox none is given; none renders in the
// worker's process; the mode in force is reported.
func TestRenderSandboxChoice(t *testing.T) {
	settings := &render.Renderer{}

	t.Run("no sandbox installed", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := NewRenderer(settings, Sandbox{StateDir: stateDir(t)})
		require.Error(t, err)
		for _, want := range []string{"install runsc", "bubblewrap", "--render-sandbox none", "development only"} {
			assert.ErrorContains(t, err, want)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		r, err := NewRenderer(settings, Sandbox{Mode: sandbox.ModeNone, StateDir: stateDir(t)})
		require.NoError(t, err)
		assert.Same(t, settings, r.SourceRenderer, "none renders in-process")
		assert.Equal(t, sandbox.ModeNone, r.Mode)
		assert.Empty(t, r.Platform)
	})
	t.Run("remote bases in a sandbox", func(t *testing.T) {
		// The worker fetches them; the sandbox needs no network.
		if _, err := exec.LookPath("bwrap"); err != nil {
			t.Skip("bwrap is not installed (.ci/run installs it)")
		}
		if _, err := exec.LookPath("prlimit"); err != nil {
			t.Skip("prlimit is not installed")
		}
		r, err := NewRenderer(&render.Renderer{AllowRemoteBases: true}, Sandbox{Mode: sandbox.ModeProcess, StateDir: stateDir(t)})
		require.NoError(t, err)
		require.IsType(t, &sandbox.Renderer{}, r.SourceRenderer)
		t.Cleanup(func() { _ = r.Close() })
		assert.Contains(t, r.Version(), "remote-bases", "a worker allowing remote bases keeps its sets apart")
	})
	t.Run("default", func(t *testing.T) {
		want, err := sandbox.DefaultMode("")
		if err != nil {
			t.Skipf("neither runsc nor bwrap is installed (.ci/run installs both): %v", err)
		}
		if _, err := exec.LookPath("prlimit"); err != nil && want == sandbox.ModeProcess {
			t.Skip("prlimit is not installed")
		}
		r, err := NewRenderer(settings, Sandbox{StateDir: stateDir(t)})
		require.NoError(t, err)
		require.IsType(t, &sandbox.Renderer{}, r.SourceRenderer)
		t.Cleanup(func() { _ = r.Close() })
		assert.Equal(t, settings.Version(), r.Version(), "the sandbox does not change the manifest cache key")
		assert.Equal(t, want, r.Mode)
		platform := sandbox.Platform(r.SourceRenderer.(*sandbox.Renderer).Runner)
		if want == sandbox.ModeGVisor {
			assert.Contains(t, sandbox.Platforms, platform, "gvisor runs on a runsc platform")
		}
		assert.Equal(t, platform, r.Platform, "the platform reported is the platform in force")
	})
}

// noCgroupEnv marks the test binary run without cgroups.
const noCgroupEnv = "FERRY_TEST_NO_CGROUP"

// TestPluginsNeedABoundedProcessSandbox starts the worker's sandbox where
// no cgroup can be had (a mount namespace without /sys/fs/cgroup, as a
// container without cgroup access): process mode renders, but with
// --plugin-dir the worker refuses to start, naming the flags to change.
func TestPluginsNeedABoundedProcessSandbox(t *testing.T) {
	for _, tool := range []string{"bwrap", "prlimit", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it)", tool)
		}
	}
	if os.Getenv(noCgroupEnv) == "" {
		// The test again, in a mount namespace of its own without cgroups.
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", `umount -R /sys/fs/cgroup && exec "$@"`, "sh",
			os.Args[0], "-test.run=^TestPluginsNeedABoundedProcessSandbox$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), noCgroupEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("without cgroups: %v\n%s", err, out)
		}
		return
	}
	pluginDir := t.TempDir()
	require.NoError(t, os.WriteFile(pluginDir+"/cm.yaml", []byte("apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: cm}\nspec:\n  generate: {command: [sh, -c, 'echo {}']}\n"), 0o644))
	plugins, err := render.LoadPlugins(pluginDir)
	require.NoError(t, err)
	s := Sandbox{Mode: sandbox.ModeProcess, StateDir: stateDir(t)}

	r, err := NewRenderer(&render.Renderer{}, s)
	require.NoError(t, err, "without plugins the process sandbox runs: a render is one process")
	require.Error(t, sandbox.BoundsWhole(r.SourceRenderer.(*sandbox.Renderer).Runner))
	t.Cleanup(func() { _ = r.Close() })

	s.PluginDir = pluginDir
	_, err = NewRenderer(&render.Renderer{Plugins: plugins}, s)
	require.Error(t, err)
	t.Log(err)
	for _, want := range []string{"--plugin-dir " + pluginDir, "no cgroup", "--render-sandbox gvisor", "cgroup v2"} {
		assert.ErrorContains(t, err, want)
	}
}
