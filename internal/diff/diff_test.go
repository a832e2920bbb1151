package diff

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

// fixture reads testdata/<name>.yaml: the live object, then the desired one.
func fixture(t *testing.T, name string) (live, desired *unstructured.Unstructured) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(data), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%s: want 2 documents, got %d", name, len(docs))
	}
	var objs []*unstructured.Unstructured
	for _, d := range docs {
		js, err := yaml.YAMLToJSON([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(js); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o)
	}
	return objs[0], objs[1]
}

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fixture string
		ignore  []app.IgnoreDifference
		want    []string // differing paths at depth 3; none: equal
	}{
		{name: "server fields are not differences", fixture: "deployment-defaulted"},
		{name: "a scaled, injected deployment", fixture: "deployment-scaled",
			want: []string{"spec.replicas", "spec.template.spec"}},
		{name: "jsonPointers", fixture: "deployment-scaled",
			ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}},
			want:   []string{"spec.template.spec"}},
		{name: "jqPathExpressions", fixture: "deployment-scaled",
			ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{
				`.spec.template.spec.containers[] | select(.name == "sidecar") | .image`,
			}}},
			want: []string{"spec.replicas"}},
		{name: "managedFieldsManagers", fixture: "deployment-scaled",
			ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"kubectl", "injector"}}}},
		{name: "managedFieldsManagers of one manager", fixture: "deployment-scaled",
			ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"kubectl"}}},
			want:   []string{"spec.template.spec"}},
		{name: "a rule for another name ignores nothing", fixture: "deployment-scaled",
			ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", Name: "api", JSONPointers: []string{"/spec/replicas"}}},
			want:   []string{"spec.replicas", "spec.template.spec"}},
		{name: "a rule of group and kind only ignores nothing, as in Argo CD", fixture: "deployment-scaled",
			ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment"}},
			want:   []string{"spec.replicas", "spec.template.spec"}},
		{name: "a rule without the group is for the core group", fixture: "deployment-scaled",
			ignore: []app.IgnoreDifference{{Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}},
			want:   []string{"spec.replicas", "spec.template.spec"}},
		{name: "globs", fixture: "deployment-scaled",
			ignore: []app.IgnoreDifference{{Group: "*", Kind: "*", Namespace: "sh*", JSONPointers: []string{"/spec/replicas", "/spec/template/spec/containers/1/image"}}}},
		{name: "an extra annotation", fixture: "service-annotated", want: []string{"metadata.annotations"}},
		{name: "an ignored annotation leaves no empty map behind", fixture: "service-annotated",
			ignore: []app.IgnoreDifference{{Kind: "Service", JSONPointers: []string{"/metadata/annotations/cloud.example.com~1lb-id"}}}},
		{name: "secret data", fixture: "secret-changed", want: []string{"data.new", "data.old", "data.password"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := Compile(tc.ignore)
			if err != nil {
				t.Fatal(err)
			}
			live, desired := fixture(t, tc.fixture)
			res := Compare(live, desired, rules)
			if d := cmp.Diff(tc.want, res.Paths(3)); d != "" {
				t.Errorf("paths (-want +got):\n%s", d)
			}
			if res.Equal() != (len(tc.want) == 0) {
				t.Errorf("Equal() = %v", res.Equal())
			}
		})
	}
}

func TestCompareLeavesInputsAlone(t *testing.T) {
	live, desired := fixture(t, "deployment-scaled")
	before := live.DeepCopy()
	rules, err := Compile([]app.IgnoreDifference{{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"kubectl"},
		JQPathExpressions: []string{".spec.template"}}})
	if err != nil {
		t.Fatal(err)
	}
	Compare(live, desired, rules)
	if d := cmp.Diff(before.Object, live.Object); d != "" {
		t.Errorf("live changed (-before +after):\n%s", d)
	}
}

func TestCompareMissingSides(t *testing.T) {
	live, desired := fixture(t, "service-annotated")
	for _, res := range []Result{Compare(nil, desired, nil), Compare(live, nil, nil)} {
		if res.Equal() {
			t.Error("a missing side is never equal")
		}
		text, err := res.Unified("Service/shop/web", 0)
		if err != nil || text == "" {
			t.Errorf("Unified: %q, %v", text, err)
		}
	}
}

func TestUnifiedMasksSecrets(t *testing.T) {
	live, desired := fixture(t, "secret-changed")
	text, err := Compare(live, desired, nil).Unified("Secret/shop/creds", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, value := range []string{"YWRtaW4=", "aHVudGVyMg==", "c3dvcmRmaXNo", "b2xk", "bmV3", "hunter2", "swordfish"} {
		if strings.Contains(text, value) {
			t.Errorf("the diff shows the value %q:\n%s", value, text)
		}
	}
	want := strings.Join([]string{
		"--- live/Secret/shop/creds",
		"+++ desired/Secret/shop/creds",
		"@@ -1,7 +1,7 @@",
		" apiVersion: v1",
		" data:",
		"-  old: ++++++++",
		"-  password: ++++++++",
		"+  new: ++++++++",
		"+  password: +++++++++",
		"   user: ++++++++",
		" kind: Secret",
		" metadata:",
		"",
	}, "\n")
	if d := cmp.Diff(want, text); d != "" {
		t.Errorf("unified diff (-want +got):\n%s", d)
	}
	if !strings.Contains(live.Object["data"].(map[string]any)["password"].(string), "aHVudGVy") {
		t.Error("masking must work on copies")
	}
}

func TestUnifiedDeployment(t *testing.T) {
	live, desired := fixture(t, "deployment-scaled")
	text, err := Compare(live, desired, nil).Unified("Deployment/shop/web", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"-  replicas: 5\n", "+  replicas: 2\n", "-      - image: proxy:2\n", "+      - image: proxy:1\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("diff lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(text, "managedFields") {
		t.Errorf("managedFields are not shown:\n%s", text)
	}
	cut, _ := Compare(live, desired, nil).Unified("Deployment/shop/web", 60)
	if len(cut) > 120 || !strings.Contains(cut, "diff cut at") {
		t.Errorf("a limited diff is cut: %q", cut)
	}
}

func TestCompileErrors(t *testing.T) {
	_, err := Compile([]app.IgnoreDifference{
		{Kind: "Deployment", JSONPointers: []string{"spec/replicas"}},
		{Kind: "Deployment", JQPathExpressions: []string{".spec | ["}},
		{Kind: "[", JSONPointers: []string{"/a"}},
	})
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"spec.ignoreDifferences[0].jsonPointers[0]", "spec.ignoreDifferences[1].jqPathExpressions[0]", "spec.ignoreDifferences[2]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestRemovePointer(t *testing.T) {
	for _, tc := range []struct {
		pointer string
		in      string
		want    string
	}{
		{"/a/b", `{"a":{"b":1,"c":2}}`, `{"a":{"c":2}}`},
		{"/a/b", `{"a":{"b":1}}`, `{}`},
		{"/a/1", `{"a":[1,2,3]}`, `{"a":[1,3]}`},
		{"/a/0/x", `{"a":[{"x":1}],"b":1}`, `{"b":1}`},
		{"/a~1b/c~0d", `{"a/b":{"c~d":1,"e":1}}`, `{"a/b":{"e":1}}`},
		{"/missing/x", `{"a":1}`, `{"a":1}`},
		{"/a/9", `{"a":[1]}`, `{"a":[1]}`},
	} {
		tokens, err := parsePointer(tc.pointer)
		if err != nil {
			t.Fatal(err)
		}
		var doc, want map[string]any
		_ = yaml.Unmarshal([]byte(tc.in), &doc)
		_ = yaml.Unmarshal([]byte(tc.want), &want)
		removePointer(doc, tokens)
		if d := cmp.Diff(want, doc); d != "" {
			t.Errorf("%s on %s (-want +got):\n%s", tc.pointer, tc.in, d)
		}
	}
}

func TestRespect(t *testing.T) {
	live, desired := fixture(t, "deployment-scaled")
	for _, tc := range []struct {
		name   string
		ignore []app.IgnoreDifference
		want   []string // paths that still differ once desired respects the rules
	}{
		{name: "jsonPointers take live's value",
			ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}},
			want:   []string{"spec.template.spec"}},
		{name: "jq paths take live's value",
			ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{
				`.spec.template.spec.containers[] | select(.name == "sidecar") | .image`}}},
			want: []string{"spec.replicas"}},
		{name: "fields of the managers are left to them",
			ignore: []app.IgnoreDifference{{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"kubectl"}}},
			want:   []string{"spec.template.spec"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := Compile(tc.ignore)
			if err != nil {
				t.Fatal(err)
			}
			d := desired.DeepCopy()
			rules.Respect(live, d.Object)
			got := Compare(live, d, nil)
			if tc.name == "fields of the managers are left to them" {
				if _, has := d.Object["spec"].(map[string]any)["replicas"]; has {
					t.Error("spec.replicas is kubectl's: it must leave the applied object")
				}
				return
			}
			if diff := cmp.Diff(tc.want, got.Paths(3)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	rules, _ := Compile([]app.IgnoreDifference{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/paused"}}})
	d := desired.DeepCopy()
	d.Object["spec"].(map[string]any)["paused"] = true
	rules.Respect(live, d.Object)
	if _, has := d.Object["spec"].(map[string]any)["paused"]; has {
		t.Error("a field live does not have leaves desired")
	}
}
