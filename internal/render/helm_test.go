package render

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

func TestHelmChart(t *testing.T) {
	res, err := Render(context.Background(), "testdata", app.Source{Path: "helm-chart"}, Options{AppName: "shop", Namespace: "store"})
	if err != nil {
		t.Fatal(err)
	}
	if res.SourceType != SourceTypeHelm {
		t.Fatalf("SourceType = %s", res.SourceType)
	}
	assertGolden(t, "helm-chart", res.Objects)
	// CRDs first; the pre-install hook kept with its annotation; the test
	// hook and NOTES.txt left out; the vendored and the file:// subchart in.
	assertNames(t, res.Objects, []string{
		"CustomResourceDefinition/widgets.shop.example.com",
		"ConfigMap/shop-common",
		"Service/shop-redis",
		"ConfigMap/shop-shop-capabilities",
		"Deployment/shop-shop",
		"Job/shop-shop-migrate",
		"Service/shop-shop",
	})
	assertAnnotation(t, find(t, res.Objects, "Job/shop-shop-migrate"), "helm.sh/hook", "pre-install,pre-upgrade")
	caps := find(t, res.Objects, "ConfigMap/shop-shop-capabilities")
	assertField(t, caps, "v1.37.2", "data", "kubeVersion")
	assertField(t, caps, "true", "data", "hasDeployments")
	assertField(t, caps, "false", "data", "hasServiceMonitors")
	assertField(t, caps, "store", "data", "namespace")
}

func TestHelmOptions(t *testing.T) {
	tests := []struct {
		name     string
		helm     app.HelmSource
		renderer Renderer
		opts     Options
		check    func(t *testing.T, r *Result)
		wantErr  string
	}{
		{name: "release name and namespace from the spec", helm: app.HelmSource{ReleaseName: "web", Namespace: "prod"},
			opts: Options{AppName: "ignored", Namespace: "ignored"},
			check: func(t *testing.T, r *Result) {
				assertField(t, find(t, r.Objects, "Deployment/web-shop"), "prod", "metadata", "namespace")
			}},
		{name: "no namespace anywhere is default", helm: app.HelmSource{ReleaseName: "web"},
			check: func(t *testing.T, r *Result) {
				assertField(t, find(t, r.Objects, "Deployment/web-shop"), "default", "metadata", "namespace")
			}},
		{name: "value file", helm: app.HelmSource{ValueFiles: []string{"values-prod.yaml"}},
			check: func(t *testing.T, r *Result) {
				assertReplicas(t, find(t, r.Objects, "Deployment/app-shop"), 5)
				assertPort(t, find(t, r.Objects, "Service/app-shop"), 8080)
			}},
		{name: "values win over value files", helm: app.HelmSource{ValueFiles: []string{"values-prod.yaml"}, Values: "replicaCount: 7\n"},
			check: func(t *testing.T, r *Result) {
				assertReplicas(t, find(t, r.Objects, "Deployment/app-shop"), 7)
				assertPort(t, find(t, r.Objects, "Service/app-shop"), 8080)
			}},
		{name: "valuesObject wins over values", helm: app.HelmSource{Values: "replicaCount: 7\n", ValuesObject: map[string]any{"replicaCount": 2}},
			check: func(t *testing.T, r *Result) { assertReplicas(t, find(t, r.Objects, "Deployment/app-shop"), 2) }},
		{name: "parameters win, forceString quotes", helm: app.HelmSource{ValuesObject: map[string]any{"replicaCount": 2},
			Parameters: []app.HelmParameter{{Name: "replicaCount", Value: "4"}, {Name: "labels.version", Value: "1,2", ForceString: true}, {Name: "image.tag", Value: "3.0"}}},
			check: func(t *testing.T, r *Result) {
				d := find(t, r.Objects, "Deployment/app-shop")
				assertReplicas(t, d, 4)
				assertField(t, d, "1,2", "metadata", "labels", "version")
			}},
		{name: "fileParameters come last, as --set-file", helm: app.HelmSource{
			Parameters:     []app.HelmParameter{{Name: "labels.version", Value: "from-a-parameter"}},
			FileParameters: []app.HelmFileParameter{{Name: "labels.version", Path: "version.txt"}}},
			check: func(t *testing.T, r *Result) {
				assertField(t, find(t, r.Objects, "Deployment/app-shop"), "from-a-file", "metadata", "labels", "version")
			}},
		{name: "subchart disabled by its condition", helm: app.HelmSource{Parameters: []app.HelmParameter{{Name: "redis.enabled", Value: "false"}}},
			check: func(t *testing.T, r *Result) {
				for _, n := range names(r.Objects) {
					if n == "Service/app-redis" {
						t.Error("the disabled subchart rendered")
					}
				}
			}},
		{name: "skipCrds", helm: app.HelmSource{SkipCrds: true},
			check: func(t *testing.T, r *Result) { assertCount(t, r.Objects, "CustomResourceDefinition", 0) }},
		{name: "worker capabilities", renderer: Renderer{Capabilities: Capabilities{KubeVersion: "1.35", APIVersions: []string{"monitoring.coreos.com/v1"}}},
			check: func(t *testing.T, r *Result) {
				c := find(t, r.Objects, "ConfigMap/app-shop-capabilities")
				assertField(t, c, "v1.35", "data", "kubeVersion")
				assertField(t, c, "true", "data", "hasServiceMonitors")
				find(t, r.Objects, "ServiceMonitor/app-shop")
			}},
		{name: "application capabilities", helm: app.HelmSource{KubeVersion: "v1.36.1", APIVersions: []string{"monitoring.coreos.com/v1"}},
			check: func(t *testing.T, r *Result) {
				c := find(t, r.Objects, "ConfigMap/app-shop-capabilities")
				assertField(t, c, "v1.36.1", "data", "kubeVersion")
				assertField(t, c, "true", "data", "hasServiceMonitors")
			}},
		{name: "missing value file ignored", helm: app.HelmSource{ValueFiles: []string{"nope.yaml"}, IgnoreMissingValueFiles: true},
			check: func(t *testing.T, r *Result) { assertReplicas(t, find(t, r.Objects, "Deployment/app-shop"), 1) }},

		{name: "missing file parameter", helm: app.HelmSource{FileParameters: []app.HelmFileParameter{{Name: "a", Path: "nope.txt"}}},
			wantErr: "render helm-chart/nope.txt: spec.source.helm.fileParameters[0].path: no such file in the repository at this revision"},
		{name: "file parameter outside the repository", helm: app.HelmSource{FileParameters: []app.HelmFileParameter{{Name: "a", Path: "../../../etc/passwd"}}},
			wantErr: "fileParameters[0].path"},
		{name: "missing value file", helm: app.HelmSource{ValueFiles: []string{"nope.yaml"}},
			wantErr: "render helm-chart/nope.yaml: spec.source.helm.valueFiles[0]: no such file in the repository at this revision"},
		{name: "schema", helm: app.HelmSource{Values: "replicaCount: 0\n"},
			wantErr: "render helm-chart: helm: values don't meet the specifications of the schema(s) in the following chart(s):\nshop:"},
		{name: "schema skipped", helm: app.HelmSource{Values: "replicaCount: 0\n", SkipSchemaValidation: true},
			check: func(t *testing.T, r *Result) { assertReplicas(t, find(t, r.Objects, "Deployment/app-shop"), 0) }},
		{name: "values do not parse", helm: app.HelmSource{Values: "a: 1\nb: [\n"},
			wantErr: "render spec.source.helm.values: line 2:"},
		{name: "no release name", opts: Options{Namespace: "x"}, wantErr: "render helm-chart: no Helm release name"},
		{name: "an app name too long for a release name", opts: Options{AppName: strings.Repeat("a", 54)},
			wantErr: "render helm-chart: Helm release name \"" + strings.Repeat("a", 54) + "\" is 54 characters long and Helm allows 53"},
		{name: "bad kube version", helm: app.HelmSource{KubeVersion: "latest"}, wantErr: `spec.source.helm.kubeVersion "latest" is not a Kubernetes version`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if reflect.DeepEqual(opts, Options{}) {
				opts = Options{AppName: "app"}
			}
			h := tc.helm
			res, err := tc.renderer.Render(context.Background(), "testdata", app.Source{Path: "helm-chart", Helm: &h}, opts)
			if tc.wantErr != "" {
				assertErr(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, res)
		})
	}
}

func TestHelmRefusals(t *testing.T) {
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "values.yaml"), "replicaCount: 9\n")
	writeFile(t, filepath.Join(outside, "passwd"), "root:x:0:0\n")
	root := copyTree(t, "testdata")
	writeFile(t, filepath.Join(root, "links", "README"), "value files linked from elsewhere\n")
	symlink(t, filepath.Join(outside, "values.yaml"), filepath.Join(root, "links", "outside.yaml"))
	symlink(t, "../helm-chart/values-prod.yaml", filepath.Join(root, "links", "inside.yaml"))
	writeFile(t, filepath.Join(root, "shared", "values.yaml"), "replicaCount: 6\n")
	// A chart whose files include a symlink out: Helm's own loader would
	// read it into .Files.
	evil := copyTree(t, "testdata/helm-chart")
	if err := os.Rename(evil, filepath.Join(root, "evil-chart")); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(outside, "passwd"), filepath.Join(root, "evil-chart", "files-passwd"))
	writeFile(t, filepath.Join(root, "dep-escape", "Chart.yaml"), "apiVersion: v2\nname: dep-escape\nversion: 0.1.0\ndependencies:\n- name: x\n  version: 1.0.0\n  repository: file://../../../../x\n")

	tests := []struct {
		name    string
		path    string
		helm    app.HelmSource
		wantErr string
		replica int64
	}{
		{name: "value file climbing out", path: "helm-chart", helm: app.HelmSource{ValueFiles: []string{"../../x"}},
			wantErr: `render helm-chart: spec.source.helm.valueFiles[0] "../../x" leaves the repository`},
		{name: "value file deep climb", path: "helm-chart", helm: app.HelmSource{ValueFiles: []string{"../../../../../../../etc/passwd"}},
			wantErr: "leaves the repository"},
		{name: "absolute value file", path: "helm-chart", helm: app.HelmSource{ValueFiles: []string{"/etc/passwd"}},
			wantErr: `render helm-chart: spec.source.helm.valueFiles[0] "/etc/passwd" is absolute`},
		{name: "value file symlinked out", path: "helm-chart", helm: app.HelmSource{ValueFiles: []string{"../links/outside.yaml"}},
			wantErr: `render links/outside.yaml: spec.source.helm.valueFiles[0] "../links/outside.yaml" is a symlink leading outside the repository`},
		{name: "value file symlinked inside", path: "helm-chart", helm: app.HelmSource{ValueFiles: []string{"../links/inside.yaml"}}, replica: 5},
		{name: "value file elsewhere in the repository", path: "helm-chart", helm: app.HelmSource{ValueFiles: []string{"../shared/values.yaml"}}, replica: 6},
		{name: "chart file symlinked out", path: "evil-chart",
			wantErr: `render evil-chart/files-passwd: chart file "files-passwd" is a symlink leading outside the repository`},
		{name: "file:// dependency out of the repository", path: "dep-escape",
			wantErr: `render dep-escape: dependency "x" (repository file://../../../../x) "../../../../x" leaves the repository`},
		{name: "remote dependency not vendored", path: "helm-remote-dep",
			wantErr: `render helm-remote-dep: chart dependency "postgresql" 15.5.0 from https://charts.example.invalid/bitnami is not in charts/ (Chart.lock pins it): Ferry renders only what is in Git and does not download dependencies; vendor them: run ` + "`helm dependency build`"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.helm
			res, err := Render(context.Background(), root, app.Source{Path: tc.path, Helm: &h}, Options{AppName: "app"})
			if tc.wantErr != "" {
				assertErr(t, err, tc.wantErr)
				if strings.Contains(err.Error(), outside) || strings.Contains(err.Error(), root) {
					t.Errorf("error names a directory of the worker: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertReplicas(t, find(t, res.Objects, "Deployment/app-shop"), tc.replica)
		})
	}
}

func TestHelmSchemaRefsStayInTheChart(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"type": "object"}`))
	}))
	defer srv.Close()
	for name, ref := range map[string]string{"http": srv.URL + "/schema.json", "file": "file:///etc/passwd", "relative": "other.json"} {
		t.Run(name, func(t *testing.T) {
			root := copyTree(t, "testdata")
			writeFile(t, filepath.Join(root, "helm-chart", "values.schema.json"), `{"type": "object", "properties": {"image": {"$ref": "`+ref+`"}}}`)
			_, err := Render(context.Background(), root, app.Source{Path: "helm-chart"}, Options{AppName: "app"})
			assertErr(t, err, "Ferry does not load schemas from outside values.schema.json")
		})
	}
	if hits.Load() != 0 {
		t.Fatalf("the schema's $ref was fetched %d times", hits.Load())
	}
}

func TestHelmTemplateErrorNamesFileAndLine(t *testing.T) {
	root := copyTree(t, "testdata")
	writeFile(t, filepath.Join(root, "helm-chart", "templates", "broken.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: {{ .Values.nope.deeper }}\n")
	_, err := Render(context.Background(), root, app.Source{Path: "helm-chart"}, Options{AppName: "app"})
	assertErr(t, err, "render helm-chart: helm: template: shop/templates/broken.yaml:6:")

	writeFile(t, filepath.Join(root, "helm-chart", "templates", "broken.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: [\n")
	_, err = Render(context.Background(), root, app.Source{Path: "helm-chart"}, Options{AppName: "app"})
	assertErr(t, err, "render helm-chart/templates/broken.yaml (rendered): line 5:")
}

func assertReplicas(t *testing.T, d interface{ UnstructuredContent() map[string]any }, want int64) {
	t.Helper()
	got, _ := nested(d.UnstructuredContent(), "spec", "replicas").(int64)
	if got != want {
		t.Errorf("replicas = %v, want %d", nested(d.UnstructuredContent(), "spec", "replicas"), want)
	}
}

func assertPort(t *testing.T, svc interface{ UnstructuredContent() map[string]any }, want int64) {
	t.Helper()
	ports, _ := nested(svc.UnstructuredContent(), "spec", "ports").([]any)
	if len(ports) == 0 || ports[0].(map[string]any)["port"] != want {
		t.Errorf("ports = %v, want port %d", ports, want)
	}
}
