package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestKustomizeHelmCharts: with --enable-helm, the helmCharts of a
// kustomization (and of a base it includes) are inflated with the values
// kustomize would give helm (valuesInline over valuesFile, then
// additionalValuesFiles), in the chart home kustomize would look in
// (<name>-<version> for a chart of a repository), and the kustomization's
// transformers apply to them, its namespace aside as for kustomize;
// skipHooks leaves hooks out and CRDs come only with includeCRDs.
func TestKustomizeHelmCharts(t *testing.T) {
	root := t.TempDir()
	chart := func(dir string) {
		writeFile(t, filepath.Join(root, dir, "Chart.yaml"), "apiVersion: v2\nname: web\nversion: 1.2.0\n")
		writeFile(t, filepath.Join(root, dir, "values.yaml"), "color: blue\nsize: small\n")
		writeFile(t, filepath.Join(root, dir, "templates", "cm.yaml"),
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  color: {{ .Values.color }}\n  size: {{ .Values.size }}\n  ns: {{ .Release.Namespace }}\n")
		writeFile(t, filepath.Join(root, dir, "templates", "hook.yaml"),
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    helm.sh/hook: pre-install\n")
		writeFile(t, filepath.Join(root, dir, "crds", "crd.yaml"),
			"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n")
	}
	chart("app/charts/web-1.2.0/web") // as the worker fetches a chart of a repository
	chart("base/charts/web")          // a chart committed in the chart home
	writeFile(t, filepath.Join(root, "app", "prod.yaml"), "size: large\n")
	writeFile(t, filepath.Join(root, "app", "more.yaml"), "color: green\n")
	writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), `namePrefix: prod-
namespace: shop
resources:
- ../base
helmCharts:
- name: web
  repo: https://charts.example.com
  version: 1.2.0
  releaseName: front
  namespace: web
  valuesFile: prod.yaml
  valuesInline: {color: red}
  additionalValuesFiles: [more.yaml]
  skipHooks: true
`)
	writeFile(t, filepath.Join(root, "base", "kustomization.yaml"), "helmCharts:\n- name: web\n  includeCRDs: true\n")

	if _, err := Render(context.Background(), root, app.Source{Path: "app"}, Options{}); err == nil ||
		!strings.Contains(err.Error(), "helmCharts need --enable-helm") {
		t.Fatalf("without --enable-helm: %v; want refused naming the option", err)
	}
	r := &Renderer{Kustomize: KustomizeOptions{EnableHelm: true}}
	res, err := r.Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range res.Objects {
		data, _, _ := unstructuredString(o.Object, "data")
		got[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = data
		if _, ok := o.GetAnnotations()["config.kubernetes.io/helm-generated"]; ok {
			t.Errorf("%s keeps kustomize's internal mark", o.GetName())
		}
	}
	want := map[string]string{
		// valuesFile's size, valuesInline's color over it, then more.yaml's;
		// the namespace: shop of the kustomization left to Helm, whose
		// templates set none
		"ConfigMap//prod-front-settings":                "color=green,ns=web,size=large",
		"ConfigMap//prod-web-settings":                  "color=blue,ns=default,size=small",
		"ConfigMap//prod-web-hook":                      "",
		"CustomResourceDefinition//widgets.example.com": "", // kustomize prefixes no CRD
	}
	if len(got) != len(want) {
		t.Errorf("objects %v; want %v", got, want)

	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: %q (present %v); want %q", k, g, ok, v)
		}
	}
}

// TestKustomizeHelmChartNames: a helmCharts name that is not one path
// element is refused, so that no chart home or inflated file lands
// elsewhere in the repository.
func TestKustomizeHelmChartNames(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), "helmCharts:\n- name: ../base/kustomization\n")
	r := &Renderer{Kustomize: KustomizeOptions{EnableHelm: true}}
	_, err := r.Render(context.Background(), root, app.Source{Path: "app"}, Options{})
	assertErr(t, err, `helmCharts "../base/kustomization": the name is not a chart's name`)
}

// unstructuredString flattens a map of strings for comparison.
func unstructuredString(obj map[string]any, field string) (string, bool, error) {
	m, ok := obj[field].(map[string]any)
	if !ok {
		return "", false, nil
	}
	var parts []string
	for _, k := range []string{"color", "ns", "size"} {
		if v, ok := m[k]; ok {
			parts = append(parts, k+"="+v.(string))
		}
	}
	return strings.Join(parts, ","), true, nil
}

// TestParseKustomizeBuildOptions: the options Ferry takes, and every other
// one named in one error.
func TestParseKustomizeBuildOptions(t *testing.T) {
	o, err := ParseKustomizeBuildOptions(" --enable-helm --load-restrictor LoadRestrictionsNone ")
	if err != nil || !o.EnableHelm || !o.LoadRestrictorNone {
		t.Errorf("got %+v, %v", o, err)
	}
	if o, err := ParseKustomizeBuildOptions("--load-restrictor=LoadRestrictionsRootOnly"); err != nil || o.LoadRestrictorNone {
		t.Errorf("root only: %+v, %v", o, err)
	}
	_, err = ParseKustomizeBuildOptions("--enable-helm --enable-alpha-plugins --load-restrictor Everything")
	if err == nil || !strings.Contains(err.Error(), `--enable-alpha-plugins, --load-restrictor "Everything"`) {
		t.Errorf("unsupported options: %v", err)
	}
}

// TestKustomizeCharts: the worker is asked to fetch the charts of
// repositories that the checkout lacks, where the render will look for
// them; a chart already in the chart home, or of no repository, is not.
func TestKustomizeCharts(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "app", "kustomization.yaml"), `resources: [../base, https://example.com/x.yaml]
helmGlobals: {chartHome: vendor}
helmCharts:
- {name: redis, repo: https://charts.example.com, version: 1.0.0}
- {name: local}
- {name: ../../escape, repo: https://charts.example.com}
`)
	writeFile(t, filepath.Join(root, "base", "kustomization.yaml"), "helmCharts:\n- {name: web, repo: oci://registry.example.com/charts}\n- {name: kept, repo: https://charts.example.com}\n")
	writeFile(t, filepath.Join(root, "base", "charts", "kept", "Chart.yaml"), "apiVersion: v2\nname: kept\nversion: 1.0.0\n")
	got := KustomizeCharts(root, "app")
	want := []KustomizeChart{
		{RepoURL: "https://charts.example.com", Name: "redis", Version: "1.0.0", Dir: "app/vendor/redis-1.0.0/redis", Kustomization: "app/kustomization.yaml"},
		{RepoURL: "oci://registry.example.com/charts", Name: "web", Dir: "base/charts/web", Kustomization: "base/kustomization.yaml"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("[%d] %+v; want %+v", i, got[i], want[i])
		}
	}
}
