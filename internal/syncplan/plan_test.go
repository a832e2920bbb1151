package syncplan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// load reads a multi-document YAML file.
func load(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---") {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if string(js) == "null" {
			continue
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return objs
}

// describe renders a plan as "wave N: [Kind/name ...] [...]" lines.
func describe(objs []*unstructured.Unstructured, p Plan) []string {
	var out []string
	for _, w := range p.Waves {
		line := "wave " + itoa(w.Number) + ":"
		for _, step := range w.Steps {
			var names []string
			for _, i := range step {
				names = append(names, objs[i].GetKind()+"/"+objs[i].GetName())
			}
			line += " [" + strings.Join(names, " ") + "]"
		}
		out = append(out, line)
	}
	for _, i := range p.Hooks {
		out = append(out, "hook: "+objs[i].GetKind()+"/"+objs[i].GetName())
	}
	return out
}

func itoa(n int) string {
	b, _ := yaml.Marshal(n)
	return strings.TrimSpace(string(b))
}

func TestBuild(t *testing.T) {
	corpus := filepath.Join("..", "..", "..", "shared", "corpus", "argocd-example-apps")
	for _, tc := range []struct {
		file string
		want []string
	}{
		{file: "testdata/multi-wave.yaml", want: []string{
			"wave -1: [Namespace/shop] [ConfigMap/settings]",
			"wave 0: [Service/web] [Deployment/api Deployment/web] [Service/fn]",
			"wave 1: [CustomResourceDefinition/widgets.example.com] [Widget/w]",
			"wave 2: [Ingress/web]",
			"hook: Job/migrate",
			"hook: Job/smoke",
		}},
		// Argo CD's example: its Jobs are hooks; only the waves of the
		// ReplicaSets and Services are the Sync phase's.
		{file: filepath.Join(corpus, "sync-waves", "manifests.yaml"), want: []string{
			"wave 0: [Service/backend] [ReplicaSet/backend]",
			"wave 2: [Service/frontend] [ReplicaSet/frontend]",
			"hook: Job/",
			"hook: Job/maint-page-up",
			"hook: Job/maint-page-down",
		}},
	} {
		t.Run(filepath.Base(filepath.Dir(tc.file))+"/"+filepath.Base(tc.file), func(t *testing.T) {
			objs := load(t, tc.file)
			plan, errs := Build(objs)
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if d := cmp.Diff(tc.want, describe(objs, plan)); d != "" {
				t.Errorf("plan (-want +got):\n%s", d)
			}
		})
	}
}

func TestBuildOrderIgnoresInputOrder(t *testing.T) {
	objs := load(t, "testdata/multi-wave.yaml")
	want := describe(objs, mustBuild(t, objs))
	reversed := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		reversed[len(objs)-1-i] = o
	}
	got := describe(reversed, mustBuild(t, reversed))
	// Hooks are listed in input order; the waves must not depend on it.
	if d := cmp.Diff(want[:4], got[:4]); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func mustBuild(t *testing.T, objs []*unstructured.Unstructured) Plan {
	t.Helper()
	p, errs := Build(objs)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return p
}

func TestBuildPrune(t *testing.T) {
	objs := load(t, "testdata/multi-wave.yaml")
	got := describe(objs, BuildPrune(objs))
	want := []string{
		"wave 5: [Namespace/shop]",
		"wave 3: [CustomResourceDefinition/widgets.example.com]",
		"wave 2: [Ingress/web]",
		"wave 1: [Widget/w]",
		"wave 0: [Service/fn] [Deployment/web Deployment/api] [Service/web]",
		"wave -1: [ConfigMap/settings]",
		"hook: Job/migrate",
		"hook: Job/smoke",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("prune plan (-want +got):\n%s", d)
	}
}

func TestWave(t *testing.T) {
	for _, tc := range []struct {
		value   *string
		want    int
		wantErr string
	}{
		{value: nil, want: 0},
		{value: ptr("3"), want: 3},
		{value: ptr(" -2 "), want: -2},
		{value: ptr("1.5"), wantErr: `"1.5" is not an integer`},
		{value: ptr(""), wantErr: `"" is not an integer`},
	} {
		o := &unstructured.Unstructured{Object: map[string]any{}}
		if tc.value != nil {
			o.SetAnnotations(map[string]string{app.AnnotationSyncWave: *tc.value})
		}
		got, err := WaveOf(o)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("WaveOf(%v): error %v, want %q", *tc.value, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Wave: %d, %v; want %d", got, err, tc.want)
		}
	}
}

func TestBuildReportsBadWaves(t *testing.T) {
	good := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
	bad := good.DeepCopy()
	bad.SetName("b")
	bad.SetAnnotations(map[string]string{app.AnnotationSyncWave: "soon"})
	plan, errs := Build([]*unstructured.Unstructured{good, bad})
	if len(errs) != 1 || errs[0].Index != 1 {
		t.Fatalf("errors %v, want one for index 1", errs)
	}
	if plan.Len() != 1 {
		t.Errorf("plan has %d objects, want the good one only", plan.Len())
	}
}

func TestHook(t *testing.T) {
	for _, tc := range []struct {
		ann    map[string]string
		want   []app.HookType
		isHook bool
	}{
		{ann: nil},
		{ann: map[string]string{app.AnnotationHook: "PreSync,PostSync"}, want: []app.HookType{app.HookTypePreSync, app.HookTypePostSync}, isHook: true},
		{ann: map[string]string{app.AnnotationHook: "Skip"}, want: []app.HookType{app.HookTypeSkip}, isHook: true},
		{ann: map[string]string{app.AnnotationHelmHook: "pre-install, pre-upgrade"}, want: []app.HookType{app.HookTypePreSync}, isHook: true},
		{ann: map[string]string{app.AnnotationHelmHook: "test"}, isHook: true},
		{ann: map[string]string{app.AnnotationHelmHook: "pre-install", app.AnnotationHook: "Sync"}, want: []app.HookType{app.HookTypeSync}, isHook: true},
	} {
		o := &unstructured.Unstructured{Object: map[string]any{}}
		o.SetAnnotations(tc.ann)
		got, isHook := Hook(o)
		if isHook != tc.isHook || !cmp.Equal(got, tc.want) {
			t.Errorf("Hook(%v) = %v, %v; want %v, %v", tc.ann, got, isHook, tc.want, tc.isHook)
		}
	}
}

func TestKindOrder(t *testing.T) {
	order := []struct{ group, kind string }{
		{"", "Namespace"}, {"networking.k8s.io", "NetworkPolicy"}, {"", "ServiceAccount"}, {"", "Secret"},
		{"", "ConfigMap"}, {"apiextensions.k8s.io", "CustomResourceDefinition"}, {"rbac.authorization.k8s.io", "Role"},
		{"", "Service"}, {"apps", "DaemonSet"}, {"apps", "Deployment"}, {"batch", "Job"},
		{"networking.k8s.io", "Ingress"}, {"apiregistration.k8s.io", "APIService"}, {"example.com", "Widget"},
	}
	for i := 1; i < len(order); i++ {
		a, b := order[i-1], order[i]
		if KindOrder(a.group, a.kind) >= KindOrder(b.group, b.kind) {
			t.Errorf("%s/%s must come before %s/%s", a.group, a.kind, b.group, b.kind)
		}
	}
	if KindOrder("serving.knative.dev", "Service") != UnknownKind {
		t.Error("a custom kind named Service is not the core Service")
	}
}

func ptr(s string) *string { return &s }
