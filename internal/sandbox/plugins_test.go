package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// testPlugin prints a ConfigMap built from the plugin's environment; its
// init writes into the app directory, as helm dependency build does.
const testPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: cm
spec:
  version: v1.0
  init:
    command: [sh, -c]
    args: ["echo generated > init.txt"]
  generate:
    command: [sh, -c]
    args:
      - |
        cat <<YAML
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: $ARGOCD_APP_NAME-$PARAM_FLAVOR
          namespace: $ARGOCD_APP_NAMESPACE
        data:
          init: "$(cat init.txt)"
          foo: "$ARGOCD_ENV_FOO"
          files: "$PARAM_FILES_0,$PARAM_FILES_1"
          tag: "$PARAM_HELM_IMAGE_TAG"
          params: '$ARGOCD_APP_PARAMETERS'
          path: "$ARGOCD_APP_SOURCE_PATH"
          kube: "$KUBE_VERSION"
          revision: "$ARGOCD_APP_REVISION_SHORT"
        YAML
  discover:
    fileName: "*.cm"
`

const failingPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: fails
spec:
  generate:
    command: [sh, -c, 'echo "connecting with password=hunter2 failed" >&2; exit 3']
`

// foundPlugin is discovered by a command: a special.txt in the app
// directory.
const foundPlugin = `apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: found
spec:
  generate:
    command: [sh, -c, 'printf "kind: ConfigMap\napiVersion: v1\nmetadata: {name: found}\n"']
  discover:
    find:
      command: [sh, -c, 'test -f special.txt && echo yes']
`

func pluginRenderer(t *testing.T, r Runner) *Renderer {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"cm.yaml": testPlugin, "fails.yaml": failingPlugin, "found.yaml": foundPlugin} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plugins, err := render.LoadPlugins(dir)
	if err != nil {
		t.Fatal(err)
	}
	sr := testRenderer(t, r, Limits{})
	sr.Settings.Plugins, sr.PluginDir = plugins, dir
	return sr
}

func pluginRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"special", "plain"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"app/settings.cm": "x\n", "app/cm.yaml": "not: [a manifest\n",
		"special/special.txt": "", "plain/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestPluginRendersInTheSandbox(t *testing.T) {
	flavor := "sweet"
	src := app.Source{RepoURL: "https://git.example.com/org/repo.git", TargetRevision: "main", Path: "app", Plugin: &app.PluginSource{
		Name: "cm-v1.0",
		Env:  []app.EnvEntry{{Name: "FOO", Value: "bar-$ARGOCD_APP_NAME"}},
		Parameters: []app.PluginParameter{
			{Name: "flavor", String: &flavor},
			{Name: "files", Array: []string{"a.yaml", "b.yaml"}},
			{Name: "helm", Map: map[string]string{"image.tag": "v2"}},
		}}}
	opts := render.Options{AppName: "shop", Namespace: "prod", Revision: "0123456789abcdef0123456789abcdef01234567"}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sr := pluginRenderer(t, r)
		root := pluginRepo(t)
		res, err := sr.Render(context.Background(), root, src, opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.SourceType != render.SourceTypePlugin || len(res.Objects) != 1 {
			t.Fatalf("got %s with %d objects, want one object from a Plugin", res.SourceType, len(res.Objects))
		}
		cm := res.Objects[0]
		if cm.GetName() != "shop-sweet" || cm.GetNamespace() != "prod" {
			t.Errorf("ConfigMap %s/%s, want prod/shop-sweet", cm.GetNamespace(), cm.GetName())
		}
		data, _, _ := unstructuredStrings(cm.Object, "data")
		want := map[string]string{
			"init": "generated", "foo": "bar-shop", "files": "a.yaml,b.yaml", "tag": "v2", "path": "app",
			"kube": "v1.37.2", "revision": "0123456",
			"params": `[{"name":"flavor","string":"sweet"},{"array":["a.yaml","b.yaml"],"name":"files"},{"map":{"image.tag":"v2"},"name":"helm"}]`,
		}
		for k, v := range want {
			if data[k] != v {
				t.Errorf("data.%s = %q, want %q", k, data[k], v)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "app", "init.txt")); !os.IsNotExist(err) {
			t.Errorf("init wrote into the checkout itself (stat: %v); it must write to its own copy", err)
		}

		// No section at all: the plugin's discover (*.cm) matches, before
		// the directory would be read (its cm.yaml does not parse).
		res, err = sr.Render(context.Background(), root, app.Source{Path: "app"}, opts)
		if err != nil || res.SourceType != render.SourceTypePlugin {
			t.Fatalf("discovered render: %v, %+v", err, res)
		}

		// find.command discovery, with no section and with plugin: {}; a
		// path no plugin discovers stays a directory, and plugin: {} there
		// is an error.
		for _, src := range []app.Source{{Path: "special"}, {Path: "special", Plugin: &app.PluginSource{}}} {
			res, err = sr.Render(context.Background(), root, src, opts)
			if err != nil || res.SourceType != render.SourceTypePlugin || res.Objects[0].GetName() != "found" {
				t.Errorf("find.command discovery of %+v: %v, %+v", src, err, res)
			}
		}
		res, err = sr.Render(context.Background(), root, app.Source{Path: "plain"}, opts)
		if err != nil || res.SourceType != render.SourceTypeDirectory {
			t.Errorf("a path no plugin discovers: %v, %+v; want a directory", err, res)
		}
		_, err = sr.Render(context.Background(), root, app.Source{Path: "plain", Plugin: &app.PluginSource{}}, opts)
		if err == nil || !strings.Contains(err.Error(), "no plugin's discover matches") {
			t.Errorf("plugin: {} on a path no plugin discovers: %v", err)
		}

		// A failing plugin: its status and stderr, the password masked.
		_, err = sr.Render(context.Background(), root, app.Source{Path: "app", Plugin: &app.PluginSource{Name: "fails"}}, opts)
		if err == nil || !render.IsUserError(err) || !strings.Contains(err.Error(), "status 3") ||
			!strings.Contains(err.Error(), "password=******") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("failing plugin: %v; want a user error with the status and the password masked", err)
		}

		_, err = sr.Render(context.Background(), root, app.Source{Path: "app", Plugin: &app.PluginSource{Name: "cm"}}, opts)
		if err == nil || !strings.Contains(err.Error(), "write cm-v1.0") {
			t.Errorf("plugin named without its version: %v; want an error giving the full name", err)
		}
	})
}

// TestPluginsRunOnlyInASandbox: in the worker's own process a plugin
// source is refused, naming the flag.
func TestPluginsRunOnlyInASandbox(t *testing.T) {
	r := pluginRenderer(t, nil)
	_, err := r.Settings.Render(context.Background(), pluginRepo(t), app.Source{Path: "app", Plugin: &app.PluginSource{Name: "cm-v1.0"}}, render.Options{AppName: "a"})
	if err == nil || !strings.Contains(err.Error(), "--render-sandbox") {
		t.Fatalf("in-process plugin render: %v; want a refusal naming --render-sandbox", err)
	}
}

func unstructuredStrings(obj map[string]any, field string) (map[string]string, bool, error) {
	out := map[string]string{}
	m, ok := obj[field].(map[string]any)
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out, ok, nil
}
