package render

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

func TestKustomizeOverlay(t *testing.T) {
	res, err := Render(context.Background(), "testdata", app.Source{Path: "kustomize-overlay/overlays/prod"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "kustomize-overlay", res.Objects)
	d := find(t, res.Objects, "Deployment/prod-web")
	if n := d.Object["spec"].(map[string]any)["replicas"]; n != int64(3) {
		t.Errorf("replicas = %#v, want int64 3 from the overlay", n)
	}
	for _, o := range res.Objects {
		if o.GetNamespace() != "shop" || o.GetLabels()["env"] != "prod" || o.GetLabels()["app"] != "web" {
			t.Errorf("%s/%s: namespace %q labels %v", o.GetKind(), o.GetName(), o.GetNamespace(), o.GetLabels())
		}
	}
}

func TestKustomizeOptions(t *testing.T) {
	const path = "kustomize-overlay/overlays/prod"
	tests := []struct {
		name    string
		opts    app.KustomizeSource
		check   func(t *testing.T, names []string, objs map[string]map[string]any)
		wantErr string
	}{
		{name: "namePrefix replaces the overlay's", opts: app.KustomizeSource{NamePrefix: "staging-"},
			check: func(t *testing.T, names []string, _ map[string]map[string]any) {
				wantNames(t, names, "Deployment/staging-web", "Service/staging-web")
			}},
		{name: "nameSuffix", opts: app.KustomizeSource{NameSuffix: "-v2"},
			check: func(t *testing.T, names []string, _ map[string]map[string]any) {
				wantNames(t, names, "Deployment/prod-web-v2", "Service/prod-web-v2")
			}},
		{name: "namespace replaces the overlay's", opts: app.KustomizeSource{Namespace: "other"},
			check: func(t *testing.T, _ []string, objs map[string]map[string]any) {
				if ns := nested(objs["Deployment/prod-web"], "metadata", "namespace"); ns != "other" {
					t.Errorf("namespace = %v", ns)
				}
			}},
		{name: "labels and annotations are added", opts: app.KustomizeSource{
			CommonLabels: map[string]string{"team": "shop"}, CommonAnnotations: map[string]string{"owner": "ops@example.com"}},
			check: func(t *testing.T, _ []string, objs map[string]map[string]any) {
				d := objs["Deployment/prod-web"]
				if nested(d, "metadata", "labels", "team") != "shop" || nested(d, "metadata", "labels", "env") != "prod" {
					t.Errorf("labels = %v", nested(d, "metadata", "labels"))
				}
				if nested(d, "spec", "selector", "matchLabels", "team") != "shop" {
					t.Errorf("commonLabels reach selectors, as kustomize's do: %v", nested(d, "spec", "selector"))
				}
				if nested(d, "metadata", "annotations", "owner") != "ops@example.com" {
					t.Errorf("annotations = %v", nested(d, "metadata", "annotations"))
				}
			}},
		{name: "image tag", opts: app.KustomizeSource{Images: []string{"nginx:1.27"}},
			check: func(t *testing.T, _ []string, objs map[string]map[string]any) { wantImage(t, objs, "nginx:1.27") }},
		{name: "image rename and tag", opts: app.KustomizeSource{Images: []string{"nginx=registry.example.com/nginx:1.27"}},
			check: func(t *testing.T, _ []string, objs map[string]map[string]any) {
				wantImage(t, objs, "registry.example.com/nginx:1.27")
			}},
		{name: "image digest", opts: app.KustomizeSource{Images: []string{"nginx@sha256:" + strings.Repeat("a", 64)}},
			check: func(t *testing.T, _ []string, objs map[string]map[string]any) {
				wantImage(t, objs, "nginx@sha256:"+strings.Repeat("a", 64))
			}},
		{name: "label the kustomization sets", opts: app.KustomizeSource{CommonLabels: map[string]string{"env": "dev"}},
			wantErr: `render kustomize-overlay/overlays/prod/kustomization.yaml: spec.source.kustomize.commonLabels["env"] is already set in the kustomization's commonLabels`},
		{name: "bad image", opts: app.KustomizeSource{Images: []string{"nginx"}},
			wantErr: `spec.source.kustomize.images[0] "nginx" sets neither a tag nor a digest`},
	}
	checkout := copyTree(t, "testdata")
	before := snapshot(t, checkout)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			res, err := Render(context.Background(), checkout, app.Source{Path: path, Kustomize: &opts}, Options{})
			if tc.wantErr != "" {
				assertErr(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			objs := map[string]map[string]any{}
			for _, o := range res.Objects {
				objs[o.GetKind()+"/"+o.GetName()] = o.Object
			}
			tc.check(t, names(res.Objects), objs)
		})
	}
	if after := snapshot(t, checkout); after != before {
		t.Fatal("rendering with options changed the checkout")
	}
}

func TestKustomizeRefusals(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.yaml"), "apiVersion: v1\nkind: Secret\nmetadata:\n  name: stolen\n")
	writeFile(t, filepath.Join(outside, "kustomization.yaml"), "resources:\n- secret.yaml\n")
	root := t.TempDir()
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
	kust := func(dir, body string) {
		writeFile(t, filepath.Join(root, dir, "kustomization.yaml"), body)
		writeFile(t, filepath.Join(root, dir, "cm.yaml"), cm)
	}
	rel, err := filepath.Rel(filepath.Join(root, "a", "b"), outside)
	if err != nil {
		t.Fatal(err)
	}
	kust("a/b", "resources:\n- cm.yaml\n- "+filepath.ToSlash(rel)+"\n")
	kust("abs", "resources:\n- "+outside+"\n")
	kust("link-base", "resources:\n- cm.yaml\n- base\n")
	symlink(t, outside, filepath.Join(root, "link-base", "base"))
	kust("link-file", "resources:\n- cm.yaml\n- secret.yaml\n")
	symlink(t, filepath.Join(outside, "secret.yaml"), filepath.Join(root, "link-file", "secret.yaml"))
	writeFile(t, filepath.Join(root, "link-kust", "cm.yaml"), cm)
	symlink(t, filepath.Join(outside, "kustomization.yaml"), filepath.Join(root, "link-kust", "kustomization.yaml"))
	kust("generator", "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: passwd\n  files:\n  - /etc/passwd\n")
	kust("remote-git", "resources:\n- cm.yaml\n- github.com/argoproj/argocd-example-apps//kustomize-guestbook?ref=master\n")
	kust("remote-https", "resources:\n- https://raw.githubusercontent.com/argoproj/argocd-example-apps/master/guestbook/guestbook-ui-svc.yaml\n")
	kust("remote-scp", "resources:\n- git@git.example.com:org/repo.git//base\n")
	kust("remote-patch", "resources:\n- cm.yaml\npatches:\n- path: https://example.com/patch.yaml\n")
	kust("remote-nested", "resources:\n- ../remote-git\n")
	kust("remote-transformer", "resources:\n- cm.yaml\ntransformers:\n- patch.yaml\n")
	writeFile(t, filepath.Join(root, "remote-transformer", "patch.yaml"),
		"apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\npath: https://example.com/p.yaml\ntarget:\n  kind: ConfigMap\n")
	kust("helm-charts", "helmCharts:\n- name: redis\n  repo: https://charts.example.com\n")

	tests := []struct{ path, wantErr string }{
		{"a/b", "render a/b: kustomize: " + relToRoot(t, root, outside) + " is outside the repository"},
		{"abs", "is outside the repository"},
		{"link-base", "render link-base: kustomize: link-base/base (a symlink) is outside the repository"},
		{"link-file", "render link-file: kustomize: link-file/secret.yaml (a symlink) is outside the repository"},
		{"link-kust", "render link-kust: kustomize: link-kust/kustomization.yaml (a symlink) is outside the repository"},
		{"generator", "is outside the repository"},
		{"remote-git", `render remote-git/kustomization.yaml: remote references (resources: "github.com/argoproj/argocd-example-apps//kustomize-guestbook?ref=master") are not allowed on this worker`},
		{"remote-https", "render remote-https/kustomization.yaml: remote references (resources: \"https://raw.githubusercontent.com"},
		{"remote-scp", "remote references (resources: \"git@git.example.com:org/repo.git//base\")"},
		{"remote-patch", `remote references (patches.path: "https://example.com/patch.yaml")`},
		{"remote-nested", "render remote-git/kustomization.yaml: remote references"},
		{"remote-transformer", `render remote-transformer/patch.yaml: remote references (path: "https://example.com/p.yaml")`},
		{"helm-charts", "render helm-charts/kustomization.yaml: Kustomize helmCharts need --enable-helm (set kustomize.buildOptions: --enable-helm in the worker's argocd-cm"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			_, err := Render(context.Background(), root, app.Source{Path: tc.path}, Options{})
			assertErr(t, err, tc.wantErr)
			if strings.Contains(err.Error(), root) && tc.path != "abs" {
				t.Errorf("error names the worker's checkout directory: %v", err)
			}
		})
	}
}

func TestKustomizeParseErrorNamesFileAndLine(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), "resources:\n- deploy.yaml\n")
	writeFile(t, filepath.Join(root, "app", "deploy.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: [\n")
	_, err := Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	assertErr(t, err, "render app: kustomize:")
	for _, want := range []string{"deploy.yaml", "line"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	writeFile(t, filepath.Join(root, "bad", "kustomization.yaml"), "namePrefix: a\nresources: [\n")
	_, err = Render(context.Background(), root, app.Source{Path: "bad", Kustomize: &app.KustomizeSource{NamePrefix: "x-"}}, Options{})
	assertErr(t, err, "render bad/kustomization.yaml: line")
}

func TestParseImageOverride(t *testing.T) {
	tests := []struct {
		in   string
		want kustomizeImage
	}{
		{"nginx:1.27", kustomizeImage{Name: "nginx", NewTag: "1.27"}},
		{"host:5000/app:v1", kustomizeImage{Name: "host:5000/app", NewTag: "v1"}},
		{"nginx@sha256:abc", kustomizeImage{Name: "nginx", Digest: "sha256:abc"}},
		{"nginx=my/nginx", kustomizeImage{Name: "nginx", NewName: "my/nginx"}},
		{"nginx=my/nginx:2", kustomizeImage{Name: "nginx", NewName: "my/nginx", NewTag: "2"}},
		{"nginx=host:5000/nginx@sha256:abc", kustomizeImage{Name: "nginx", NewName: "host:5000/nginx", Digest: "sha256:abc"}},
	}
	for _, tc := range tests {
		got, err := parseImageOverride(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parseImageOverride(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"nginx", "=x:1", "a=b=c"} {
		if _, err := parseImageOverride(bad); err == nil {
			t.Errorf("parseImageOverride(%q): no error", bad)
		}
	}
}

func relToRoot(t *testing.T, root, p string) string {
	t.Helper()
	rel, err := filepath.Rel(root, p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

func wantNames(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("no %s among %v", w, got)
		}
	}
}

func wantImage(t *testing.T, objs map[string]map[string]any, want string) {
	t.Helper()
	containers := nested(objs["Deployment/prod-web"], "spec", "template", "spec", "containers").([]any)
	if got := containers[0].(map[string]any)["image"]; got != want {
		t.Errorf("image = %v, want %s", got, want)
	}
}

func nested(m map[string]any, fields ...string) any {
	var v any = m
	for _, f := range fields {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[f]
	}
	return v
}

// copyTree copies a directory to a temporary one (symlinks as symlinks).
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case info.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// snapshot lists every file under dir with its content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			sb.WriteString(p + "\n" + string(data) + "\n")
		}
		return nil
	})
	return sb.String()
}

// TestKustomizeRemoteReferencesAsKustomizeReadsThem: every way kustomize
// has of naming a URL, in any case of the field names, fails the render
// with the field and the URL, and nothing reaches the URL's server.
func TestKustomizeRemoteReferencesAsKustomizeReadsThem(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: stolen\n"))
	}))
	defer srv.Close()
	url := srv.URL + "/crb.yaml"
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
	inline := func(field, config string) string {
		return "resources:\n- cm.yaml\n" + field + ":\n- |\n  " + strings.ReplaceAll(config, "\n", "\n  ") + "\n"
	}
	tests := []struct{ name, kustomization, field, url string }{
		{"Resources", "Resources:\n- " + url + "\n", "resources", url},
		{"RESOURCES", "RESOURCES:\n- " + url + "\n", "resources", url},
		{"long s", "reſources:\n- " + url + "\n", "resources", url},
		{"Bases", "Bases:\n- " + url + "\n", "bases", url},
		{"Components", "Components:\n- " + url + "\n", "components", url},
		{"git URL", "Resources:\n- git::" + srv.URL + "/repo.git//base?ref=main\n", "resources", "git::" + srv.URL + "/repo.git//base?ref=main"},
		{"Patches Path", "resources:\n- cm.yaml\nPatches:\n- Path: " + url + "\n", "patches.path", url},
		{"PatchesStrategicMerge", "resources:\n- cm.yaml\nPatchesStrategicMerge:\n- " + url + "\n", "patchesStrategicMerge", url},
		{"PatchesJson6902", "resources:\n- cm.yaml\nPatchesJson6902:\n- PATH: " + url + "\n  target: {kind: ConfigMap, name: cm}\n", "patchesJson6902.path", url},
		{"Crds", "resources:\n- cm.yaml\nCrds:\n- " + url + "\n", "crds", url},
		{"Configurations", "resources:\n- cm.yaml\nConfigurations:\n- " + url + "\n", "configurations", url},
		{"OpenAPI", "resources:\n- cm.yaml\nOpenAPI:\n  path: " + url + "\n", "openapi.path", url},
		{"Replacements", "resources:\n- cm.yaml\nReplacements:\n- Path: " + url + "\n", "replacements.path", url},
		{"configMapGenerator Files", "resources:\n- cm.yaml\nconfigMapGenerator:\n- name: x\n  Files:\n  - k=" + url + "\n", "configMapGenerator", url},
		{"secretGenerator Envs", "resources:\n- cm.yaml\nSecretGenerator:\n- name: x\n  ENVS:\n  - " + url + "\n", "secretGenerator", url},
		{"inline transformer", inline("transformers", "apiVersion: builtin\nkind: PatchTransformer\nmetadata:\n  name: p\nPath: "+url+"\ntarget:\n  kind: ConfigMap"), "path", url},
		{"inline generator", inline("generators", "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: g\nFiles:\n- k="+url), "generator", url},
		{"inline validator", inline("Validators", "apiVersion: builtin\nkind: PatchStrategicMergeTransformer\nmetadata:\n  name: v\nPaths:\n- "+url), "path", url},
	}
	root := t.TempDir()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := fmt.Sprintf("case-%d", i)
			writeFile(t, filepath.Join(root, dir, "kustomization.yaml"), tc.kustomization)
			writeFile(t, filepath.Join(root, dir, "cm.yaml"), cm)
			_, err := Render(context.Background(), root, app.Source{Path: dir}, Options{})
			assertErr(t, err, fmt.Sprintf("render %s/kustomization.yaml: remote references (%s: %q) are not allowed on this worker", dir, tc.field, tc.url))
		})
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the URL's server got %d requests; want none", n)
	}

	// Inline Helm chart generators are refused, --enable-helm or not.
	writeFile(t, filepath.Join(root, "inline-helm", "kustomization.yaml"),
		inline("generators", "apiVersion: builtin\nkind: HelmChartInflationGenerator\nmetadata:\n  name: h\nname: redis\nrepo: "+srv.URL))
	_, err := Render(context.Background(), root, app.Source{Path: "inline-helm"}, Options{})
	assertErr(t, err, "render inline-helm/kustomization.yaml: Kustomize's inline Helm chart generators (helmChartInflationGenerator, or a HelmChartInflationGenerator config) are not supported yet")
	_, err = (&Renderer{Kustomize: KustomizeOptions{EnableHelm: true}}).Render(context.Background(), root, app.Source{Path: "inline-helm"}, Options{})
	assertErr(t, err, "Kustomize's inline Helm chart generators")

	// What kustomize cannot read fails before anything runs.
	writeFile(t, filepath.Join(root, "unknown-field", "kustomization.yaml"), "resources:\n- cm.yaml\nresourcez:\n- "+url+"\n")
	_, err = Render(context.Background(), root, app.Source{Path: "unknown-field"}, Options{})
	assertErr(t, err, `render unknown-field/kustomization.yaml: line 1: invalid Kustomization: json: unknown field "resourcez"`)
}
