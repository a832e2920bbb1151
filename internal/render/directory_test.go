package render

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// names lists objects as "Kind/name", the form the tests compare.
func names(objs []*unstructured.Unstructured) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.GetKind() + "/" + o.GetName()
	}
	return out
}

func assertNames(t *testing.T, got []*unstructured.Unstructured, want []string) {
	t.Helper()
	if g := strings.Join(names(got), " "); g != strings.Join(want, " ") {
		t.Fatalf("objects:\n got  %s\n want %s", g, strings.Join(want, " "))
	}
}

func assertErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
	if !IsUserError(err) {
		t.Fatalf("error %q (%T) is not a user error", err, err)
	}
}

var (
	mixedTop = []string{
		"ConfigMap/first", "ServiceAccount/from-list-1", "ServiceAccount/from-list-2", "Deployment/web", // a-multi.yaml
		"Service/web",  // b.json
		"Secret/creds", // c.yml
	}
	mixedSub = []string{"Namespace/sub", "Namespace/deeper", "Namespace/deeper-json"}
)

func TestDirectory(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		opts    *app.DirectorySource
		want    []string
		wantErr string
	}{
		{name: "top level only", path: "mixed", want: mixedTop},
		{name: "nil options", path: "./mixed/", opts: nil, want: mixedTop},
		{name: "recurse", path: "mixed", opts: &app.DirectorySource{Recurse: true}, want: append(append([]string{}, mixedTop...), mixedSub...)},
		{name: "include crosses directories", path: "mixed", opts: &app.DirectorySource{Recurse: true, Include: "*.yaml"},
			want: []string{"ConfigMap/first", "ServiceAccount/from-list-1", "ServiceAccount/from-list-2", "Deployment/web", "Namespace/sub", "Namespace/deeper"}},
		{name: "include alternatives", path: "mixed", opts: &app.DirectorySource{Include: "{*.yml,*.json}"},
			want: []string{"Service/web", "Secret/creds"}},
		{name: "exclude a directory", path: "mixed", opts: &app.DirectorySource{Recurse: true, Exclude: "sub/*"}, want: mixedTop},
		{name: "include and exclude", path: "mixed", opts: &app.DirectorySource{Recurse: true, Include: "sub/*", Exclude: "*.json"},
			want: []string{"Namespace/sub", "Namespace/deeper"}},
		{name: "include a file and a directory", path: "mixed", opts: &app.DirectorySource{Recurse: true, Include: "{c.yml,sub/deeper/*}"},
			want: []string{"Secret/creds", "Namespace/deeper", "Namespace/deeper-json"}},
		{name: "exclude jsonnet", path: "jsonnet", opts: &app.DirectorySource{Exclude: "*.jsonnet"}, want: []string{"ConfigMap/cm"}},

		{name: "yaml syntax error", path: "bad-yaml", wantErr: "render bad-yaml/deploy.yaml: line 10: mapping values are not allowed"},
		{name: "document without kind", path: "no-kind", wantErr: "render no-kind/values.yaml: line 6 (document 2): not a Kubernetes object: no apiVersion or kind"},
		{name: "json syntax error", path: "bad-json", wantErr: "render bad-json/svc.json: line 4: invalid character '}'"},
		{name: "not an object", path: "not-object", wantErr: "render not-object/list.yaml: line 1 (document 1): expected a Kubernetes object, found a list"},
		{name: "jsonnet output that is not an object", path: "jsonnet", wantErr: "render jsonnet/main.jsonnet (jsonnet output, item 0): not a Kubernetes object: no kind"},
		{name: "bad include", path: "mixed", opts: &app.DirectorySource{Include: "{a,b"}, wantErr: "render mixed: directory.include: glob \"{a,b\""},
		{name: "absolute path", path: "/etc", wantErr: "render /etc: the path must be relative"},
		{name: "dot dot", path: "../render/testdata", wantErr: `must not contain ".."`},
		{name: "dot dot inside", path: "mixed/../mixed", wantErr: `must not contain ".."`},
		{name: "missing path", path: "nope", wantErr: "render nope: no such directory"},
		{name: "file as path", path: "mixed/c.yml", wantErr: "render mixed/c.yml: not a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Directory("testdata", tc.path, tc.opts)
			if tc.wantErr != "" {
				assertErr(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertNames(t, objs, tc.want)
		})
	}
}

func TestDirectoryValues(t *testing.T) {
	objs, err := Directory("testdata", "mixed", nil)
	if err != nil {
		t.Fatal(err)
	}
	replicas, found, err := unstructured.NestedInt64(objs[3].Object, "spec", "replicas")
	if err != nil || !found || replicas != 2 {
		t.Errorf("Deployment spec.replicas = %d, %v, %v; want int64 2", replicas, found, err)
	}
	port, _, err := unstructured.NestedSlice(objs[4].Object, "spec", "ports")
	if err != nil || port[0].(map[string]any)["port"] != int64(80) {
		t.Errorf("Service port = %#v, %v; want int64 80", port, err)
	}
	if s, _, _ := unstructured.NestedString(objs[0].Object, "data", "replicas"); s != "3" {
		t.Errorf("ConfigMap data.replicas = %q, want the string \"3\"", s)
	}
}

func TestDirectorySymlinks(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n")
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "shared", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n")
	writeFile(t, filepath.Join(root, "app", "own.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n")
	symlink(t, "../shared/cm.yaml", filepath.Join(root, "app", "linked.yaml"))
	symlink(t, "../shared", filepath.Join(root, "app", "linked-dir"))
	symlink(t, "app", filepath.Join(root, "app-link"))
	symlink(t, outside, filepath.Join(root, "escape-dir"))
	writeFile(t, filepath.Join(root, "evil", "own.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n")
	symlink(t, filepath.Join(outside, "secret.yaml"), filepath.Join(root, "evil", "secret.yaml"))
	writeFile(t, filepath.Join(root, "broken", "own.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n")
	symlink(t, "missing.yaml", filepath.Join(root, "broken", "gone.yaml"))

	objs, err := Directory(root, "app", &app.DirectorySource{Recurse: true})
	if err != nil {
		t.Fatal(err)
	}
	assertNames(t, objs, []string{"ConfigMap/shared", "ConfigMap/own"}) // linked-dir is not followed
	objs, err = Directory(root, "app-link", nil)
	if err != nil {
		t.Fatal(err)
	}
	assertNames(t, objs, []string{"ConfigMap/shared", "ConfigMap/own"})

	_, err = Directory(root, "evil", nil)
	assertErr(t, err, "render evil/secret.yaml: symlink points outside the repository")
	if strings.Contains(err.Error(), outside) {
		t.Errorf("error reveals the link target: %v", err)
	}
	_, err = Directory(root, "evil", &app.DirectorySource{Exclude: "secret.yaml"})
	assertErr(t, err, "symlink points outside the repository")
	_, err = Directory(root, "escape-dir", nil)
	assertErr(t, err, "render escape-dir: the path is a symlink leading outside the repository")
	_, err = Directory(root, "broken", nil)
	assertErr(t, err, "render broken/gone.yaml: broken symlink")
}

func TestDirectoryLimits(t *testing.T) {
	tests := []struct {
		name    string
		limits  Limits
		wantErr string
	}{
		{"files", Limits{MaxFiles: 2}, "render mixed: more than 2 files under the app path"},
		{"file size", Limits{MaxFileBytes: 100}, "render mixed/a-multi.yaml: file larger than the 100 bytes limit"},
		{"total size", Limits{MaxTotalBytes: 600}, "render mixed: manifest files add up to more than 600 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Renderer{Limits: tc.limits}
			_, err := r.Directory("testdata", "mixed", nil)
			assertErr(t, err, tc.wantErr)
			var limit *LimitError
			if !errors.As(err, &limit) {
				t.Fatalf("error %T, want *LimitError", err)
			}
		})
	}
	r := &Renderer{Limits: Limits{MaxFiles: 5}}
	if _, err := r.Directory("testdata", "mixed", nil); err != nil {
		t.Fatalf("five files within a limit of five: %v", err)
	}
}

func TestSplitYAML(t *testing.T) {
	docs := splitYAML([]byte("a: 1\n---\nb: 2\n--- # c\n\nc: 3\n--- d: 4\n...\n"))
	var got []string
	for _, d := range docs {
		got = append(got, strings.TrimSpace(string(d.data))+"@"+strconv.Itoa(d.line))
	}
	want := "a: 1@1 b: 2@3 c: 3@5 d: 4@7 @9"
	if strings.Join(got, " ") != want {
		t.Fatalf("splitYAML: %q, want %q", strings.Join(got, " "), want)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
