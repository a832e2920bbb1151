package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestJsonnetExampleApps renders Argo CD's two Jsonnet example apps as Argo
// CD does: a .libsonnet import, and top-level arguments as strings and as
// code.
func TestJsonnetExampleApps(t *testing.T) {
	root := corpusRoot(t)
	res, err := Render(context.Background(), root, app.Source{Path: "jsonnet-guestbook"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.SourceType != SourceTypeDirectory {
		t.Errorf("source type %s, want %s", res.SourceType, SourceTypeDirectory)
	}
	assertCount(t, res.Objects, "", 2)
	assertField(t, find(t, res.Objects, "Service/jsonnet-guestbook-ui"), "LoadBalancer", "spec", "type")
	assertReplicas(t, find(t, res.Objects, "Deployment/jsonnet-guestbook-ui"), 1)

	tla := &app.DirectorySource{Jsonnet: &app.JsonnetSource{TLAs: []app.JsonnetVar{
		{Name: "name", Value: "tla-$ARGOCD_APP_NAME"}, {Name: "replicas", Value: "2 + 1", Code: true},
	}}}
	res, err = Render(context.Background(), root, app.Source{Path: "jsonnet-guestbook-tla", Directory: tla}, Options{AppName: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	assertCount(t, res.Objects, "", 2)
	assertReplicas(t, find(t, res.Objects, "Deployment/tla-shop"), 3)
	find(t, res.Objects, "Service/tla-shop")
}

// TestJsonnetVariablesLibsAndImports: external variables (strings with the
// build environment expanded, code), libraries relative to the repository
// root, and imports that cannot leave the repository.
func TestJsonnetVariablesLibsAndImports(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.libsonnet"), `{ token: "stolen" }`)
	writeFile(t, filepath.Join(root, "vendor", "k.libsonnet"), `{ cm(name, data):: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: name }, data: data } }`)
	writeFile(t, filepath.Join(root, "app", "main.jsonnet"), `local k = import "k.libsonnet";
k.cm(std.extVar("name"), { revision: std.extVar("rev"), count: std.toString(std.extVar("count")), price: "$$5" })`)
	writeFile(t, filepath.Join(root, "app", "list.jsonnet"), `[import "one.libsonnet", { apiVersion: "v1", kind: "ConfigMapList", items: [(import "one.libsonnet") + { metadata+: { name: "two" } }] }]`)
	writeFile(t, filepath.Join(root, "app", "one.libsonnet"), `{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "one" } }`)
	src := app.Source{RepoURL: "https://git.example.com/shop.git", Path: "app", Directory: &app.DirectorySource{Jsonnet: &app.JsonnetSource{
		ExtVars: []app.JsonnetVar{
			{Name: "name", Value: "${ARGOCD_APP_NAME}-${ARGOCD_APP_NAMESPACE}"},
			{Name: "rev", Value: "$ARGOCD_APP_REVISION_SHORT"},
			{Name: "count", Value: "{ a: 1 }.a + 1", Code: true},
		},
		Libs: []string{"vendor"},
	}}}
	sha := "0123456789abcdef0123456789abcdef01234567"
	res, err := Render(context.Background(), root, src, Options{AppName: "shop", Namespace: "prod", Revision: sha})
	if err != nil {
		t.Fatal(err)
	}
	// Files in path order: list.jsonnet, then main.jsonnet; a List is flattened.
	if got := names(res.Objects); len(got) != 3 || got[0] != "ConfigMap/one" || got[1] != "ConfigMap/two" || got[2] != "ConfigMap/shop-prod" {
		t.Fatalf("objects %v, want ConfigMap/one, ConfigMap/two, ConfigMap/shop-prod", got)
	}
	cm := res.Objects[2]
	assertField(t, cm, "0123456", "data", "revision")
	assertField(t, cm, "2", "data", "count")
	if !PerApp(src) {
		t.Error("PerApp: variables naming the build environment render per app")
	}
	if PerApp(app.Source{Path: "app", Directory: &app.DirectorySource{Jsonnet: &app.JsonnetSource{ExtVars: []app.JsonnetVar{{Name: "x", Value: "plain"}}}}}) {
		t.Error("PerApp: plain variables render the same for every app")
	}

	rel, err := filepath.Rel(filepath.Join(root, "escape"), filepath.Join(outside, "secret.libsonnet"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "escape", "dotdot.jsonnet"), `import "`+filepath.ToSlash(rel)+`"`)
	writeFile(t, filepath.Join(root, "absolute", "abs.jsonnet"), `importstr "/etc/passwd"`)
	writeFile(t, filepath.Join(root, "link", "main.jsonnet"), `import "lib/secret.libsonnet"`)
	if err := os.MkdirAll(filepath.Join(root, "link", "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.libsonnet"), filepath.Join(root, "link", "lib", "secret.libsonnet")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "badlib", "main.jsonnet"), `{}`)
	writeFile(t, filepath.Join(root, "syntax", "main.jsonnet"), "{ apiVersion: \"v1\",\n  kind: }")
	tests := []struct {
		path    string
		libs    []string
		wantErr string
	}{
		{path: "escape", wantErr: "render escape/dotdot.jsonnet: jsonnet:"},
		{path: "absolute", wantErr: `import "/etc/passwd": imports must be relative paths inside the repository`},
		{path: "link", wantErr: `import "lib/secret.libsonnet": link/lib/secret.libsonnet is a symlink leading outside the repository`},
		{path: "badlib", libs: []string{"../x"}, wantErr: `render badlib: directory.jsonnet.libs: "../x" is outside the repository`},
		{path: "syntax", wantErr: "render syntax/main.jsonnet: jsonnet: syntax/main.jsonnet:2:9-10 Unexpected: \"}\" while parsing terminal"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			src := app.Source{Path: tc.path, Directory: &app.DirectorySource{Jsonnet: &app.JsonnetSource{Libs: tc.libs}}}
			_, err := Render(context.Background(), root, src, Options{})
			assertErr(t, err, tc.wantErr)
			if err != nil && (strings.Contains(err.Error(), "stolen") || strings.Contains(err.Error(), root)) {
				t.Errorf("error shows what is outside the repository, or the checkout's path: %v", err)
			}
		})
	}
	// ".." that stays inside the repository is as fine as in Argo CD.
	writeFile(t, filepath.Join(root, "up", "main.jsonnet"), `import "../app/one.libsonnet"`)
	if _, err := Render(context.Background(), root, app.Source{Path: "up"}, Options{}); err != nil {
		t.Errorf("an import of a sibling directory: %v", err)
	}
}
