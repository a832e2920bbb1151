package render

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

// loadFiles reads the checkout at root (absolute) into memory at the same
// path, as the sandbox's renderer reads it from its request.
func loadFiles(t *testing.T, root string) *Files {
	t.Helper()
	files := NewFiles(root)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return files.Add(filepath.ToSlash(rel), fs.ModeDir|0o555, nil, "")
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return files.Add(filepath.ToSlash(rel), fs.ModeSymlink|0o777, nil, link)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return files.Add(filepath.ToSlash(rel), info.Mode().Perm(), data, "")
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestFilesRenderAsDisk renders directory sources (plain, recursive,
// filtered, Jsonnet, symlinks in and out of the repository, broken ones,
// bad paths, limits) from the checkout on disk and from the same checkout
// in memory: the objects and the errors are the same. Other source types
// are refused from memory, with an error that says so.
func TestFilesRenderAsDisk(t *testing.T) {
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n")
	writeFile(t, filepath.Join(outside, "secret.libsonnet"), `{ token: "stolen" }`)
	links := t.TempDir()
	writeFile(t, filepath.Join(links, "shared", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n")
	writeFile(t, filepath.Join(links, "app", "own.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n")
	symlink(t, "../shared/cm.yaml", filepath.Join(links, "app", "linked.yaml"))
	symlink(t, "../shared", filepath.Join(links, "app", "linked-dir"))
	symlink(t, "app", filepath.Join(links, "app-link"))
	symlink(t, "app-link/../shared", filepath.Join(links, "via-link"))
	symlink(t, outside, filepath.Join(links, "escape-dir"))
	symlink(t, "/usr/../etc", filepath.Join(links, "abs-dir"))
	writeFile(t, filepath.Join(links, "evil", "own.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n")
	symlink(t, filepath.Join(outside, "secret.yaml"), filepath.Join(links, "evil", "secret.yaml"))
	writeFile(t, filepath.Join(links, "broken", "own.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n")
	symlink(t, "missing.yaml", filepath.Join(links, "broken", "gone.yaml"))
	writeFile(t, filepath.Join(links, "loop", "own.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n")
	symlink(t, "loop-b.yaml", filepath.Join(links, "loop", "loop-a.yaml"))
	symlink(t, "loop-a.yaml", filepath.Join(links, "loop", "loop-b.yaml"))
	writeFile(t, filepath.Join(links, "jn", "main.jsonnet"), `[import "lib/one.libsonnet", import "../shared/cm.yaml"]`)
	writeFile(t, filepath.Join(links, "jn", "lib", "one.libsonnet"), `{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "one" } }`)
	writeFile(t, filepath.Join(links, "jn-escape", "main.jsonnet"), `import "lib/secret.libsonnet"`)
	symlink(t, outside, filepath.Join(links, "jn-escape", "lib"))

	// The corpus's real path: a checkout's root has no symlink among its
	// parents (a clone in the cache, /src in a sandbox), but ../shared may
	// be one (a CI clone beside a link to the shared folder).
	corpus, err := filepath.Abs(corpusRoot(t))
	if err == nil {
		corpus, err = filepath.EvalSymlinks(corpus)
	}
	if err != nil {
		t.Fatal(err)
	}
	checkouts := []struct {
		root    string
		sources []app.Source
	}{
		{testdata, []app.Source{
			{Path: "mixed"}, {Path: "./mixed/"}, {Path: "mixed", Directory: &app.DirectorySource{Recurse: true}},
			{Path: "mixed", Directory: &app.DirectorySource{Recurse: true, Include: "sub/*", Exclude: "*.json"}},
			{Path: "mixed", Directory: &app.DirectorySource{Include: "{a,b"}},
			{Path: "jsonnet"}, {Path: "jsonnet", Directory: &app.DirectorySource{Exclude: "*.jsonnet"}}, {Path: "jsonnet-list"},
			{Path: "bad-yaml"}, {Path: "bad-json"}, {Path: "no-kind"}, {Path: "not-object"},
			{Path: "/etc"}, {Path: "../render/testdata"}, {Path: "nope"}, {Path: "mixed/c.yml"}, {Path: "mixed/c.yml/x"},
			{Path: "kustomize"}, {Path: "helm-chart"}, {Path: "mixed", Helm: &app.HelmSource{}},
		}},
		{links, []app.Source{
			{Path: "app", Directory: &app.DirectorySource{Recurse: true}}, {Path: "app-link"}, {Path: "via-link"},
			{Path: "app-link/linked-dir"}, {Path: "evil"}, {Path: "evil", Directory: &app.DirectorySource{Exclude: "secret.yaml"}},
			{Path: "escape-dir"}, {Path: "abs-dir"}, {Path: "broken"}, {Path: "loop"}, {Path: "jn"}, {Path: "jn-escape"}, {Path: "."},
		}},
		{corpus, []app.Source{
			{Path: "guestbook"}, {Path: "sync-waves"}, {Path: "pre-post-sync"}, {Path: "apps"},
			{Path: "jsonnet-guestbook"},
			{Path: "jsonnet-guestbook-tla", Directory: &app.DirectorySource{Jsonnet: &app.JsonnetSource{
				TLAs: []app.JsonnetVar{{Name: "name", Value: "tla"}, {Name: "replicas", Value: "2", Code: true}}}}},
			{Path: "kustomize-guestbook"},
		}},
	}
	opts := Options{AppName: "demo", Namespace: "demo", Revision: "0123456789abcdef0123456789abcdef01234567"}
	for _, c := range checkouts {
		files := loadFiles(t, c.root)
		for _, src := range c.sources {
			name := filepath.Base(c.root) + "/" + src.Path
			t.Run(name, func(t *testing.T) {
				typ, typErr := (&Renderer{}).SourceType(c.root, src)
				for _, limits := range []Limits{{}, {MaxFiles: 2}, {MaxFileBytes: 100}} {
					disk := &Renderer{Limits: limits}
					want, wantErr := disk.Render(context.Background(), c.root, src, opts)
					mem := &Renderer{Limits: limits, Files: files}
					got, err := mem.Render(context.Background(), c.root, src, opts)
					if typErr == nil && typ != SourceTypeDirectory {
						if err == nil || !strings.Contains(err.Error(), "not rendered from a checkout in memory") {
							t.Fatalf("a %s source from memory: %v, want it refused", typ, err)
						}
						continue
					}
					switch {
					case wantErr != nil || err != nil:
						if wantErr == nil || err == nil || err.Error() != wantErr.Error() {
							t.Fatalf("limits %+v: from memory %v, from disk %v", limits, err, wantErr)
						}
					case !reflect.DeepEqual(got, want):
						t.Fatalf("limits %+v: from memory %v, from disk %v", limits, names(got.Objects), names(want.Objects))
					}
					if wantErr == nil && limits == (Limits{}) && len(want.Objects) == 0 && src.Path != "." {
						t.Fatalf("rendered no objects: the test renders nothing")
					}
				}
			})
		}
	}
}
