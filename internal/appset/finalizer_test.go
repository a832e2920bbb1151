package appset

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// listSet is a set of one list element with the given syncPolicy and
// template metadata lines.
func listSet(t *testing.T, syncPolicy, metadata string) *ApplicationSet {
	t.Helper()
	s, err := Read(fmt.Appendf(nil, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fin}
spec:
  generators:
  - list: {elements: [{name: one}]}
  %s
  template:
    metadata: {name: '{{name}}'%s}
    spec:
      project: default
      source: {repoURL: https://git.example.com/r.git, path: x}
      destination: {name: us-east-1, namespace: x}
`, syncPolicy, metadata))
	require.NoError(t, err)
	return s
}

// TestGeneratedAppsFinalizer follows Argo CD's RenderTemplateParams (and
// its TestRenderTemplateParamsFinalizers): the resources finalizer unless
// preserveResourcesOnDeletion, and never beside the template's own.
func TestGeneratedAppsFinalizer(t *testing.T) {
	for _, tc := range []struct {
		name, syncPolicy, metadata string
		want                       []string
	}{
		{"no syncPolicy", "", "", []string{"resources-finalizer.argocd.argoproj.io"}},
		{"preserveResourcesOnDeletion false", "syncPolicy: {preserveResourcesOnDeletion: false}", "", []string{"resources-finalizer.argocd.argoproj.io"}},
		{"preserveResourcesOnDeletion", "syncPolicy: {preserveResourcesOnDeletion: true}", "", nil},
		{"the template's own", "", ", finalizers: [resources-finalizer.argocd.argoproj.io/background]",
			[]string{"resources-finalizer.argocd.argoproj.io/background"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Generate(context.Background(), listSet(t, tc.syncPolicy, tc.metadata), Options{})
			require.NoError(t, err)
			require.Len(t, res.Apps, 1)
			require.Equal(t, tc.want, res.Apps[0].Metadata.Finalizers)
		})
	}
}

// TestNoGenerators: generators: [] is accepted, as Argo CD's CRD accepts
// it, and generates nothing.
func TestNoGenerators(t *testing.T) {
	s, err := Read([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: empty}
spec:
  generators: []
  syncPolicy: {applicationsSync: create-only}
  template:
    metadata: {}
    spec: {project: default, source: {repoURL: https://git.example.com/r.git, path: x}, destination: {name: us-east-1, namespace: x}}
`))
	require.NoError(t, err)
	res, err := Generate(context.Background(), s, Options{})
	require.NoError(t, err)
	require.Empty(t, res.Apps)
	require.Empty(t, res.Invalid)
}
