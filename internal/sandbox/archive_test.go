package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/treearchive"
)

// TestArchiveRoundTrip sends a checkout of files, directories and
// symlinks through writeArchive and unpackArchive: the copy has the same
// contents, executable bits and links, and no write permission anywhere.
func TestArchiveRoundTrip(t *testing.T) {
	src := t.TempDir()
	// Files of every size that puts the next header elsewhere: none, one
	// block exactly, and more than writeArchive's zeros at a time.
	files := map[string]string{"app/a.yaml": "kind: A\n", "app/sub/b.yaml": "kind: B\n", "bin/run.sh": "#!/bin/sh\n",
		"empty": "", "block": strings.Repeat("b", tarBlock), "large.yaml": strings.Repeat("# a line of a large file\n", 8000)}
	for name, content := range files {
		file := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "bin/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("app/a.yaml", filepath.Join(src, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	entries, ok, err := planArchive(src)
	if err != nil || !ok {
		t.Fatalf("planArchive: ok %v, %v", ok, err)
	}
	var buf bytes.Buffer
	if err := writeArchive(&buf, src, entries); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := unpackArchive(&buf, dst); err != nil {
		t.Fatal(err)
	}
	files["link.yaml"] = "kind: A\n"
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %d bytes (%.20q…), %v; want %d bytes (%.20q…)", name, len(got), got, err, len(want), want)
		}
	}
	if link, err := os.Readlink(filepath.Join(dst, "link.yaml")); err != nil || link != "app/a.yaml" {
		t.Errorf("link.yaml links to %q (%v), want app/a.yaml", link, err)
	}
	if info, err := os.Stat(filepath.Join(dst, "bin/run.sh")); err != nil || info.Mode().Perm() != 0o555 {
		t.Errorf("bin/run.sh: %v, %v; want mode 0555", info.Mode(), err)
	}
	_ = filepath.Walk(dst, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode()&os.ModeSymlink == 0 && info.Mode().Perm()&0o222 != 0 {
			t.Errorf("%s is writable: %v", p, info.Mode())
		}
		return nil
	})
}

// TestUnpackRefusesPathsOutOfItsDirectories: an archive may only name
// new paths below its own directories; nothing through a symlink, above
// the directory, absolute, or twice.
func TestUnpackRefusesPathsOutOfItsDirectories(t *testing.T) {
	type entry struct {
		name, link string
	}
	for name, entries := range map[string][]entry{
		"above":         {{name: "../x"}},
		"absolute":      {{name: "/etc/x"}},
		"unclean":       {{name: "a/../x"}},
		"no parent":     {{name: "a/x"}},
		"via a symlink": {{name: "a", link: "OUTSIDE"}, {name: "a/x"}},
		"twice":         {{name: "x"}, {name: "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			outside := t.TempDir()
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			for _, e := range entries {
				h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: tar.TypeReg}
				if e.link != "" {
					h.Typeflag, h.Linkname = tar.TypeSymlink, strings.ReplaceAll(e.link, "OUTSIDE", outside)
				}
				if err := tw.WriteHeader(h); err != nil {
					t.Fatal(err)
				}
			}
			_ = tw.Close()
			dst := filepath.Join(t.TempDir(), "src")
			if err := os.Mkdir(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := unpackArchive(&buf, dst); err == nil {
				t.Fatal("unpacked")
			}
			if left, _ := os.ReadDir(outside); len(left) != 0 {
				t.Errorf("%d files written outside", len(left))
			}
		})
	}
}

// TestRendererSendsOrMountsTheCheckout renders in each sandbox, in a
// sandbox of its own and in a pooled one, with the checkout sent as an
// archive and, when it has more files than an archive may hold, mounted:
// both render as in-process.
func TestRendererSendsOrMountsTheCheckout(t *testing.T) {
	root := corpusRoot(t)
	sources := []app.Source{
		{Path: "guestbook"},
		{Path: "helm-guestbook", Helm: &app.HelmSource{ValueFiles: []string{"values-production.yaml"}}},
		{Path: "kustomize-guestbook"},
	}
	max := treearchive.MaxFiles
	t.Cleanup(func() { treearchive.MaxFiles = max })
	forEachSandbox(t, func(t *testing.T, r Runner) {
		for _, pool := range []int{0, 1} {
			sandboxed := testRenderer(t, r, Limits{})
			sandboxed.Pool, sandboxed.PoolDir = pool, t.TempDir()
			for _, files := range []int{max, 0} {
				treearchive.MaxFiles = files
				for _, src := range sources {
					opts := render.Options{AppName: "a", Namespace: "demo"}
					want, err := sandboxed.Settings.Render(context.Background(), root, src, opts)
					if err != nil {
						t.Fatal(err)
					}
					got, err := sandboxed.Render(context.Background(), root, src, opts)
					how := map[bool]string{true: "sent", false: "mounted"}[files > 0] + map[bool]string{true: " into a pooled sandbox", false: ""}[pool > 0]
					if err != nil {
						t.Fatalf("%s, checkout %s: %v", src.Path, how, err)
					}
					if len(got.Objects) != len(want.Objects) {
						t.Fatalf("%s, checkout %s: %d objects, want %d", src.Path, how, len(got.Objects), len(want.Objects))
					}
					for i := range want.Objects {
						if !reflect.DeepEqual(got.Objects[i].Object, want.Objects[i].Object) {
							t.Errorf("%s, checkout %s: object %d differs", src.Path, how, i)
						}
					}
				}
			}
			_ = sandboxed.Close()
		}
	})
}

// TestRendererSendsTheKeptArchive: a checkout with an archive kept beside
// it (as the Git cache keeps one for each tree) reaches its sandbox as
// that archive, not as its files read back: here the two differ, and the
// render is the archive's. A kept archive the renderer cannot read fails
// the render and names it.
func TestRendererSendsTheKeptArchive(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tree")
	cm := func(name string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n"
	}
	if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "app", "cm.yaml"), []byte(cm("from-the-files")), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := treearchive.NewBuilder(treearchive.Path(root))
	if err != nil {
		t.Fatal(err)
	}
	body := cm("from-the-archive")
	b.Add("app", fs.ModeDir, 0, "")
	if _, err := io.WriteString(b.Add("app/cm.yaml", 0o644, int64(len(body)), ""), body); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	src, opts := app.Source{Path: "app"}, render.Options{AppName: "a", Namespace: "demo"}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		for _, pool := range []int{0, 1} {
			sandboxed := testRenderer(t, r, Limits{})
			sandboxed.Pool, sandboxed.PoolDir = pool, t.TempDir()
			res, err := sandboxed.Render(context.Background(), root, src, opts)
			if err != nil {
				t.Fatalf("pool %d: %v", pool, err)
			}
			var names []string
			for _, o := range res.Objects {
				names = append(names, o.GetName())
			}
			if !reflect.DeepEqual(names, []string{"from-the-archive"}) {
				t.Errorf("pool %d: rendered %v, want the archive's ConfigMap from-the-archive", pool, names)
			}
			_ = sandboxed.Close()
		}
	})
	if err := os.WriteFile(treearchive.Path(root), []byte(strings.Repeat("not a tar archive\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		_, err := testRenderer(t, r, Limits{}).Render(context.Background(), root, src, opts)
		if err == nil || !strings.Contains(err.Error(), "the checkout's archive") {
			t.Errorf("render of a checkout whose kept archive is not one: %v, want an error naming the checkout's archive", err)
		}
	})
}
