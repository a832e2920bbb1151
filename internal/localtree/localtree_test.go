package localtree

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tree writes files (name → content; a name ending in / is a directory)
// under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if name[len(name)-1] == '/' {
			require.NoError(t, os.MkdirAll(p, 0o755))
			continue
		}
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}

// TestPackRoundTrip: the tree comes back as it was, without .git; the
// digest names the files only (not their times), and changes with them.
func TestPackRoundTrip(t *testing.T) {
	root := tree(t, map[string]string{
		"apps/web/deploy.yaml": "kind: Deployment\n", "apps/web/values.yaml": "a: 1\n",
		"base/cm.yaml": "kind: ConfigMap\n", ".git/HEAD": "ref: refs/heads/main\n", "apps/web/.git": "gitdir: elsewhere\n",
	})
	require.NoError(t, os.Symlink("../../base/cm.yaml", filepath.Join(root, "apps/web/cm.yaml")))
	dir := filepath.Join(root, "apps/web")
	packed, err := Pack(root, dir)
	require.NoError(t, err)
	require.Equal(t, "apps/web", packed.Path)
	require.Equal(t, 3, packed.Files)
	require.Equal(t, Digest(packed.Archive), packed.Digest)

	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, "deploy.yaml"), later, later))
	again, err := Pack(root, dir)
	require.NoError(t, err)
	require.Equal(t, packed.Digest, again.Digest, "a file's time is not part of the digest")

	out := t.TempDir()
	require.NoError(t, Unpack(packed.Archive, out))
	got, err := os.ReadFile(filepath.Join(out, "apps/web/cm.yaml"))
	require.NoError(t, err)
	require.Equal(t, "kind: ConfigMap\n", string(got), "the symlink inside the tree is kept")
	require.NoFileExists(t, filepath.Join(out, ".git/HEAD"))
	require.NoFileExists(t, filepath.Join(out, "apps/web/.git"))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "deploy.yaml"), []byte("kind: Deployment\nx: 2\n"), 0o644))
	changed, err := Pack(root, dir)
	require.NoError(t, err)
	require.NotEqual(t, packed.Digest, changed.Digest)

	_, err = Pack("", dir)
	require.ErrorContains(t, err, "outside the tree", "without a root, DIR is the tree: its link to base leads out")
	alone, err := Pack("", filepath.Join(root, "base"))
	require.NoError(t, err)
	require.Equal(t, ".", alone.Path)
}

// TestPackRefuses: a missing DIR, a DIR outside its root, and a tree with
// symlinks leading out of it and a file of another type, every problem
// named at once.
func TestPackRefuses(t *testing.T) {
	root := tree(t, map[string]string{"app/deploy.yaml": "kind: Deployment\n", "other/x.yaml": "x\n"})
	_, err := Pack(root, filepath.Join(root, "missing"))
	require.ErrorContains(t, err, "--local "+filepath.Join(root, "missing")+": no such directory")

	_, err = Pack(filepath.Join(root, "app"), filepath.Join(root, "other"))
	require.ErrorContains(t, err, "is not inside --local-repo-root")

	app := filepath.Join(root, "app")
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(app, "abs.yaml")))
	require.NoError(t, os.Symlink("../other/x.yaml", filepath.Join(app, "up.yaml")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(app, "pipe"), 0o644))
	_, err = Pack(app, app)
	require.Error(t, err)
	for _, want := range []string{"abs.yaml: symlink to /etc/passwd, an absolute path", "up.yaml: symlink to ../other/x.yaml, outside the tree", "pipe: a p"} {
		require.ErrorContains(t, err, want)
	}
	packed, err := Pack(root, app)
	require.ErrorContains(t, err, "abs.yaml", "a root that holds ../other still refuses the absolute link")
	require.Nil(t, packed)
}

// TestPackLimits: a tree over MaxFiles or MaxBytes is refused, saying the
// limits and what to do.
func TestPackLimits(t *testing.T) {
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d"} {
		files[n+".yaml"] = "kind: ConfigMap\n"
	}
	root := tree(t, files)
	defer func(n int) { MaxFiles = n }(MaxFiles)
	MaxFiles = 3
	_, err := Pack(root, root)
	require.ErrorContains(t, err, "holds 4 entries")
	require.ErrorContains(t, err, "at most 3 entries and 16 MiB")
	MaxFiles = 5000

	big := tree(t, nil)
	f, err := os.Create(filepath.Join(big, "big.yaml"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxBytes+1))
	require.NoError(t, f.Close())
	_, err = Pack(big, big)
	require.ErrorContains(t, err, "a local sync takes at most")
}

// TestUnpackRefuses: an archive made by someone else that climbs out of
// the tree, links out of it, or skips a parent is refused.
func TestUnpackRefuses(t *testing.T) {
	for name, headers := range map[string][]tar.Header{
		"climbs":   {{Name: "../evil.yaml", Typeflag: tar.TypeReg, Mode: 0o644}},
		"absolute": {{Name: "/evil.yaml", Typeflag: tar.TypeReg, Mode: 0o644}},
		"links":    {{Name: "out", Typeflag: tar.TypeSymlink, Linkname: "../../etc"}},
		"orphan":   {{Name: "nodir/x.yaml", Typeflag: tar.TypeReg, Mode: 0o644}},
		"device":   {{Name: "dev", Typeflag: tar.TypeChar}},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, h := range headers {
				require.NoError(t, tw.WriteHeader(&h))
			}
			require.NoError(t, tw.Close())
			err := Unpack(buf.Bytes(), t.TempDir())
			require.ErrorContains(t, err, "the local tree")
		})
	}
}
