package image

import (
	"archive/tar"
	"context"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/sandbox"
)

// staticBinaries is a directory of Binaries built with CGO_ENABLED=0:
// FERRY_BIN's (make build writes them so), else built here.
func staticBinaries(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FERRY_BIN")
	if dir == "" {
		dir = t.TempDir()
		for b, pkg := range map[string]string{"ferry-worker": "worker", "ferry": "starter", "ferry-render": "renderer", "ferry-server": "server"} {
			cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, b), "github.com/ferry-gitops/ferry/"+pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "go build %s: %s", pkg, out)
		}
	}
	for _, b := range Binaries {
		f, err := elf.Open(filepath.Join(dir, b))
		require.NoError(t, err)
		for _, p := range f.Progs {
			assert.NotEqual(t, elf.PT_INTERP, p.Type, "%s/%s is dynamically linked: an image without a base has no loader (build it with CGO_ENABLED=0, as make build does)", dir, b)
		}
		f.Close()
	}
	return dir
}

// TestFerryImage builds Ferry's image twice, pushes it to a real
// distribution registry, reads it back from there and runs its
// ferry-worker under gVisor with only the image's files.
func TestFerryImage(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the stack's registry")
	}
	bin := staticBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := devenv.StartChartServers(ctx, t.TempDir(), "", "", "")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, cs.Stop()) })

	// Reproducible: two builds of the same files, the same digest.
	ref := cs.OCIRegistry + "/ferry/ferry-worker"
	var digests []string
	for _, tag := range []string{"a", "b"} {
		spec, err := FerrySpec(bin, "", runtime.GOARCH)
		require.NoError(t, err)
		img, err := Build(spec)
		require.NoError(t, err)
		d, err := Push(ctx, img, ref+":"+tag)
		require.NoError(t, err)
		digests = append(digests, d.String())
	}
	require.Equal(t, digests[0], digests[1], "the same binaries make the same image")

	r, err := name.ParseReference(ref + "@" + digests[0])
	require.NoError(t, err)
	img, err := remote.Image(r, remote.WithContext(ctx))
	require.NoError(t, err, "read %s from the registry", r)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "65532:65532", cf.Config.User, "non-root")
	assert.Equal(t, []string{"/usr/local/bin/ferry-worker"}, cf.Config.Entrypoint)
	assert.Contains(t, cf.Config.Env, "PATH=/usr/local/bin", "deploy/ runs ferry-worker by name")
	assert.Equal(t, "linux", cf.OS)
	assert.True(t, cf.Created.Time.Equal(Epoch), "fixed dates: %s", cf.Created)

	// The root file system: the binaries, passwd naming the user, /tmp; no
	// shell.
	root := t.TempDir()
	files := extract(t, mutate.Extract(img), root)
	for _, b := range Binaries {
		assert.Equal(t, os.FileMode(0o755), files["usr/local/bin/"+b].Mode().Perm(), "usr/local/bin/%s", b)
	}
	assert.Equal(t, os.ModeDir|os.ModeSticky|0o777, files["tmp"].Mode()&(os.ModeDir|os.ModeSticky|os.ModePerm), "/tmp")
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	require.NoError(t, err)
	assert.Contains(t, string(passwd), "nonroot:x:65532:65532:")
	for p := range files {
		assert.NotContains(t, []string{"bin/sh", "usr/bin/sh", "bin/bash"}, p, "no shell in the image")
	}

	// ferry-worker --version from the image's own files under runsc.
	if _, err := exec.LookPath("runsc"); err != nil {
		t.Fatal("runsc is not on PATH: install gVisor (Debian package runsc) or put the tools bin dir (FERRY_TOOLS_BIN) first")
	}
	runner, err := sandbox.New(sandbox.ModeGVisor, t.TempDir(), sandbox.GVisor{})
	require.NoError(t, err)
	res, err := runner.Run(ctx, sandbox.Spec{
		Args:   []string{"/usr/local/bin/ferry-worker", "--version"},
		Mounts: []sandbox.Mount{{Source: filepath.Join(root, "usr"), Target: "/usr"}, {Source: filepath.Join(root, "etc"), Target: "/etc"}},
	})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, "ferry-worker --version under runsc: %s", res.Stderr)
	assert.True(t, strings.HasPrefix(string(res.Stdout), "ferry-worker "), "%q", res.Stdout)
	assert.Contains(t, string(res.Stdout), runtime.Version())
}

// extract unpacks the flattened image into root and returns its entries'
// infos by path.
func extract(t *testing.T, rc io.ReadCloser, root string) map[string]os.FileInfo {
	t.Helper()
	defer rc.Close()
	out := map[string]os.FileInfo{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		p := strings.TrimSuffix(h.Name, "/")
		out[p] = h.FileInfo()
		dst := filepath.Join(root, p)
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(dst, 0o755))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode))
			require.NoError(t, err)
			_, err = io.Copy(f, tr)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		default:
			t.Fatalf("%s: unexpected entry type %c", h.Name, h.Typeflag)
		}
	}
}
