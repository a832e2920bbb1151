package appset

import (
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

func ignoreApp(name, revision string, annotations map[string]string) *app.Application {
	a := &app.Application{APIVersion: app.APIVersion, Kind: app.Kind, Metadata: app.ObjectMeta{Name: name, Annotations: annotations}}
	a.Spec.Source = app.Source{RepoURL: "https://git.example/r.git", TargetRevision: revision, Path: "p"}
	return a
}

// TestKeepIgnored: the fields ignoreApplicationDifferences names keep the
// running app's values, for every app or only the one an entry names; the
// others are the generated ones.
func TestKeepIgnored(t *testing.T) {
	entries := []ApplicationMatchExpression{
		{JSONPointers: []string{"/spec/source/targetRevision"}},
		{Name: "b", JQPathExpressions: []string{`.metadata.annotations["owner"]`}},
	}
	for _, tc := range []struct {
		name          string
		wantRev       string
		wantOwner     string
		wantUnchanged bool
	}{{"a", "feature", "", false}, {"b", "feature", "alice", true}} {
		live := ignoreApp(tc.name, "feature", map[string]string{"owner": "alice"})
		gen := ignoreApp(tc.name, "main", nil)
		got, err := KeepIgnored(entries, live, gen)
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.Source.TargetRevision != tc.wantRev || got.Metadata.Annotations["owner"] != tc.wantOwner {
			t.Errorf("%s: revision %q owner %q, want %q %q", tc.name, got.Spec.Source.TargetRevision, got.Metadata.Annotations["owner"], tc.wantRev, tc.wantOwner)
		}
		if Differs(live, got) == tc.wantUnchanged {
			t.Errorf("%s: Differs = %v", tc.name, !tc.wantUnchanged)
		}
	}
	_, err := Read([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: ig}
spec:
  generators: [{list: {elements: [{app: a}]}}]
  ignoreApplicationDifferences:
  - jsonPointers: [spec/source]
  template:
    metadata: {name: '{{app}}'}
    spec: {project: default, source: {repoURL: 'https://git.example/r.git', path: '{{app}}'}, destination: {name: in-cluster, namespace: x}}
`))
	if err == nil || !strings.Contains(err.Error(), "spec.ignoreApplicationDifferences[0].jsonPointers[0]") {
		t.Fatalf("a bad pointer is named: %v", err)
	}
}
