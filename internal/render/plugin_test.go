package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writePlugins(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadPlugins(t *testing.T) {
	dir := writePlugins(t, map[string]string{
		"b.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: b}\nspec:\n  generate: {command: [sh, -c, 'true']}\n",
		"a.yml": "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: a}\nspec:\n  version: v1\n" +
			"  generate: {command: [sh]}\n  discover: {find: {glob: '**/Chart.yaml'}}\n",
		"notes.txt": "not a plugin",
	})
	plugins, err := LoadPlugins(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(plugins) != 2 || plugins[0].FullName() != "a-v1" || plugins[1].FullName() != "b" {
		t.Fatalf("plugins %v, want a-v1 and b in that order", plugins)
	}
	if plugins[0].Digest() == plugins[1].Digest() {
		t.Error("two plugins have one digest")
	}
	with := (&Renderer{Plugins: plugins}).Version()
	if with == (&Renderer{}).Version() || with == (&Renderer{Plugins: plugins[:1]}).Version() {
		t.Error("the plugins are not part of the renderer's Version")
	}
}

func TestLoadPluginsRefusesBadFiles(t *testing.T) {
	dir := writePlugins(t, map[string]string{
		"bad.yaml": "apiVersion: v1\nkind: ConfigManagementPlugin\nmetadata: {name: 'my plugin'}\nspec:\n  provideGitCreds: true\n" +
			"  discover: {fileName: '../*.yaml'}\n  parameters: {static: [{collectionType: list}]}\n",
		"typo.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: t}\nspec:\n  generat: {command: [sh]}\n",
	})
	_, err := LoadPlugins(dir)
	if err == nil {
		t.Fatal("bad plugin files accepted")
	}
	for _, want := range []string{
		"bad.yaml: apiVersion:", "bad.yaml: metadata.name:", "bad.yaml: spec.generate.command: required",
		"bad.yaml: spec.discover.fileName:", "bad.yaml: spec.parameters.static[0].name: required",
		"bad.yaml: spec.parameters.static[0].collectionType:", "bad.yaml: spec.provideGitCreds:",
		"typo.yaml:", `typo.yaml: unknown field "generat": fix the spelling`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestParamEnvName(t *testing.T) {
	for in, want := range map[string]string{"values-files": "VALUES_FILES", "image.tag": "IMAGE_TAG", "a_B9": "A_B9"} {
		if got := paramEnvName(in); got != want {
			t.Errorf("paramEnvName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatchDoubleStar(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"**/Chart.yaml", "Chart.yaml", true},
		{"**/Chart.yaml", "charts/sub/Chart.yaml", true},
		{"*.yaml", "sub/a.yaml", false},
		{"sub/*.cm", "sub/x.cm", true},
	} {
		if got := matchDoubleStar(strings.Split(c.pattern, "/"), strings.Split(c.name, "/")); got != c.want {
			t.Errorf("%s ~ %s = %t, want %t", c.pattern, c.name, got, c.want)
		}
	}
}

func TestMaskSecrets(t *testing.T) {
	in := "auth failed: password=hunter2 token: abc123 Authorization: Bearer xyz\n" +
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\ndata c3VwZXJzZWNyZXRzdXBlcnNlY3JldHN1cGVyc2VjcmV0cw=="
	out := maskSecrets(in)
	for _, secret := range []string{"hunter2", "abc123", "xyz", "MIIE", "c3VwZXJzZWNyZXRz"} {
		if strings.Contains(out, secret) {
			t.Errorf("masked output still holds %q: %s", secret, out)
		}
	}
	if !strings.Contains(out, "auth failed") {
		t.Errorf("masking took the message too: %s", out)
	}
}
