package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGeneratePathsAndFilesTouch: the annotation's items resolve against
// the source's path (or the root, from "/"), and a change touches the app
// when a file is one of them, lies under one, or matches one as a pattern,
// as Argo CD reads manifest-generate-paths.
func TestGeneratePathsAndFilesTouch(t *testing.T) {
	a := &Application{Metadata: ObjectMeta{Annotations: map[string]string{
		AnnotationManifestGeneratePaths: " .; ../shared ;/charts/*/values.yaml;;",
	}}}
	src := &Source{Path: "apps/web"}
	paths := a.GeneratePaths(src)
	if diff := cmp.Diff([]string{"apps/web", "apps/shared", "charts/*/values.yaml"}, paths); diff != "" {
		t.Fatalf("GeneratePaths (-want +got):\n%s", diff)
	}
	if got := a.GeneratePaths(&Source{}); got[0] != "." {
		t.Errorf("a source without a path: %v; want . first (the root)", got)
	}
	tests := []struct {
		name  string
		files []string
		want  bool
	}{
		{"a file under the app's path", []string{"apps/api/x.yaml", "apps/web/deploy.yaml"}, true},
		{"the path itself", []string{"/apps/shared"}, true},
		{"a file matching a pattern", []string{"charts/redis/values.yaml"}, true},
		{"a sibling with the same prefix", []string{"apps/webhook/x.yaml"}, false},
		{"elsewhere only", []string{"README.md", "apps/api/x.yaml", "charts/redis/Chart.yaml"}, false},
		{"no files known", nil, true},
	}
	for _, tt := range tests {
		if got := FilesTouch(paths, tt.files); got != tt.want {
			t.Errorf("%s: FilesTouch(%v) = %v, want %v", tt.name, tt.files, got, tt.want)
		}
	}
	if !FilesTouch(nil, []string{"README.md"}) {
		t.Error("an app without the annotation: every change may touch it")
	}
}
