package render

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// dump writes objects as a YAML stream, in their order.
func dump(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	var sb strings.Builder
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		sb.WriteString("---\n")
		sb.Write(b)
	}
	return sb.String()
}

// assertGolden compares objects with testdata/golden/name.yaml; go test
// -update rewrites it.
func assertGolden(t *testing.T, name string, objs []*unstructured.Unstructured) {
	t.Helper()
	got := dump(t, objs)
	file := filepath.Join("testdata", "golden", name+".yaml")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if got != string(want) {
		t.Fatalf("rendered output differs from %s (go test -update rewrites it):\n%s", file, got)
	}
}

func find(t *testing.T, objs []*unstructured.Unstructured, kindName string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind()+"/"+o.GetName() == kindName {
			return o
		}
	}
	t.Fatalf("no %s among %v", kindName, names(objs))
	return nil
}

func assertCount(t *testing.T, objs []*unstructured.Unstructured, kind string, want int) {
	t.Helper()
	n := 0
	for _, o := range objs {
		if kind == "" || o.GetKind() == kind {
			n++
		}
	}
	if n != want {
		t.Errorf("%d objects of kind %q, want %d: %v", n, kind, want, names(objs))
	}
}

func assertField(t *testing.T, o *unstructured.Unstructured, want string, fields ...string) {
	t.Helper()
	got, _, err := unstructured.NestedString(o.Object, fields...)
	if err != nil || got != want {
		t.Errorf("%s/%s %s = %q (%v), want %q", o.GetKind(), o.GetName(), strings.Join(fields, "."), got, err, want)
	}
}

func assertAnnotation(t *testing.T, o *unstructured.Unstructured, key, want string) {
	t.Helper()
	if got := o.GetAnnotations()[key]; got != want {
		t.Errorf("%s/%s annotation %s = %q, want %q", o.GetKind(), o.GetName(), key, got, want)
	}
}
