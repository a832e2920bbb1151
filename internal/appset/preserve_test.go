package appset

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestKeepPreserved: the keys spec.preservedFields names, and the
// annotations Argo CD always keeps, take the running app's values; the set
// writes its own over every other key, and removes what it no longer
// generates.
func TestKeepPreserved(t *testing.T) {
	live := &app.Application{Metadata: app.ObjectMeta{Name: "web",
		Annotations: map[string]string{"team": "blue", "stray": "x", "argocd.argoproj.io/refresh": "normal", "from-set": "old"},
		Labels:      map[string]string{"tier": "gold", "env": "prod"}}}
	gen := &app.Application{Metadata: app.ObjectMeta{Name: "web",
		Annotations: map[string]string{"team": "red", "from-set": "new"}, Labels: map[string]string{"env": "dev"}}}

	got := KeepPreserved(&PreservedFields{Annotations: []string{"team", "missing"}, Labels: []string{"tier"}}, live, gen)
	require.Equal(t, map[string]string{"team": "blue", "from-set": "new", "argocd.argoproj.io/refresh": "normal"}, got.Metadata.Annotations)
	require.Equal(t, map[string]string{"env": "dev", "tier": "gold"}, got.Metadata.Labels)
	require.Equal(t, map[string]string{"team": "red", "from-set": "new"}, gen.Metadata.Annotations, "the generated app is not changed")

	got = KeepPreserved(nil, live, gen)
	require.Equal(t, map[string]string{"team": "red", "from-set": "new", "argocd.argoproj.io/refresh": "normal"}, got.Metadata.Annotations)
	require.Equal(t, map[string]string{"env": "dev"}, got.Metadata.Labels)

	bare := &app.Application{Metadata: app.ObjectMeta{Name: "web"}}
	got = KeepPreserved(&PreservedFields{Labels: []string{"tier"}}, live, bare)
	require.Equal(t, map[string]string{"tier": "gold"}, got.Metadata.Labels)
	require.False(t, Differs(live, KeepPreserved(&PreservedFields{Annotations: []string{"team", "stray", "from-set"}, Labels: []string{"tier", "env"}}, live, bare)),
		"every key preserved: nothing for the set to write")
}

// TestPreservedFieldsRead: spec.preservedFields is read; a key that is no
// label or annotation key is named with its field, every one at once.
func TestPreservedFieldsRead(t *testing.T) {
	set := func(pf string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: keep}
spec:
  generators: [{list: {elements: [{name: a}]}}]
  template:
    metadata: {name: '{{name}}'}
    spec:
      project: default
      source: {repoURL: https://git.example/r.git, path: x}
      destination: {name: in-cluster, namespace: x}
  preservedFields:
` + pf
	}
	s, err := Read([]byte(set("    annotations: [team, example.com/owner]\n    labels: [tier]\n")))
	require.NoError(t, err)
	require.Equal(t, &PreservedFields{Annotations: []string{"team", "example.com/owner"}, Labels: []string{"tier"}}, s.Spec.PreservedFields)

	_, err = Read([]byte(set("    annotations: ['bad key', '']\n    labels: [-tier]\n    spec: [x]\n")))
	require.Error(t, err)
	for _, want := range []string{
		`spec.preservedFields.annotations[0]: "bad key" is not an annotation key`,
		`spec.preservedFields.annotations[1]: "" is not an annotation key`,
		`spec.preservedFields.labels[0]: "-tier" is not a label key`,
		"spec.preservedFields.spec",
	} {
		require.ErrorContains(t, err, want)
	}
}
