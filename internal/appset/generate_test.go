package appset

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

func generateExample(t *testing.T, file string) *Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpus, "argocd-appset-examples", file))
	require.NoError(t, err)
	set, err := Read(data)
	require.NoError(t, err)
	src := newDirTree(t, filepath.Join(corpus, "argocd-appset-examples"), "applicationset/examples/")
	res, err := Generate(context.Background(), set, Options{Source: src, Clusters: regions3,
		Validate: app.ValidateOptions{Regions: testRegions(t)}})
	require.NoError(t, err)
	return res
}

func names(res *Result) []string {
	var out []string
	for _, a := range res.Apps {
		out = append(out, a.Metadata.Name)
	}
	return out
}

// TestGenerateAsArgoCD: the examples produce the apps Argo CD's
// documentation says they do, in both template forms.
func TestGenerateAsArgoCD(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
		path map[string]string // app -> spec.source.path
	}{
		{file: "git-generator-directory/git-directories-example.yaml", want: []string{"argo-workflows", "prometheus-operator"},
			path: map[string]string{"argo-workflows": "applicationset/examples/git-generator-directory/cluster-addons/argo-workflows"}},
		{file: "git-generator-directory/git-directories-example-fasttemplate.yaml", want: []string{"argo-workflows", "prometheus-operator"}},
		{file: "git-generator-directory/excludes/git-directories-exclude-example.yaml", want: []string{"argo-workflows", "prometheus-operator"}},
		{file: "git-generator-directory/excludes/git-directories-exclude-example-fasttemplate.yaml", want: []string{"argo-workflows", "prometheus-operator"}},
		{file: "git-generator-files-discovery/git-generator-files.yaml", want: []string{"engineering-dev-guestbook", "engineering-prod-guestbook"}},
		{file: "git-generator-files-discovery/git-generator-files-fasttemplate.yaml", want: []string{"engineering-dev-guestbook", "engineering-prod-guestbook"}},
		{file: "list-generator/list-example.yaml", want: []string{"engineering-dev-guestbook", "engineering-prod-guestbook"}},
		{file: "matrix/cluster-and-git.yaml", want: []string{
			"argo-workflows-us-east-1", "argo-workflows-eu-west-1", "argo-workflows-ap-south-1",
			"prometheus-operator-us-east-1", "prometheus-operator-eu-west-1", "prometheus-operator-ap-south-1"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			res := generateExample(t, tc.file)
			got := names(res)
			require.Empty(t, res.Invalid)
			require.Equal(t, tc.want, got)
			for _, a := range res.Apps {
				if p, ok := tc.path[a.Metadata.Name]; ok {
					require.Equal(t, p, a.Spec.Source.Path)
				}
			}
		})
	}
}

func TestFastTemplateLeavesUnknownNames(t *testing.T) {
	r := renderer{}
	got, err := r.renderString("{{ a }}-{{b}}-{{ missing }}", Params{"a": "x", "b": "y"})
	require.NoError(t, err)
	require.Equal(t, "x-y-{{ missing }}", got)
	g := renderer{goTemplate: true, options: []string{"missingkey=error"}}
	got, err = g.renderString(`{{ .a | upper }}-{{ default "d" .none }}`, Params{"a": "x", "none": nil})
	require.NoError(t, err)
	require.Equal(t, "X-d", got)
	_, err = g.renderString("{{ .missing }}", Params{})
	require.ErrorContains(t, err, `map has no entry for key "missing"`)
}

// TestReadNamesEveryProblem: all mistakes of a file at once, each with its
// field.
func TestReadNamesEveryProblem(t *testing.T) {
	_, err := Read([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: Bad_Name}
spec:
  goTemplateOptions: [missingkey=maybe]
  generators:
  - list: {elements: [{a: b}]}
    git: {repoURL: x, directories: [{path: a}]}
  - scmProvider: {}
  - merge: {generators: [{list: {elements: [{a: b}]}}]}
  syncPolicy: {applicationsSync: sometimes}
  template:
    metadata: {name: x}
    spec: {source: {repoURL: x, pathh: y}}
`))
	require.Error(t, err)
	for _, want := range []string{
		`applicationset "Bad_Name"`,
		"metadata.name: \"Bad_Name\" is not a DNS label",
		"spec.goTemplateOptions[0]",
		"spec.generators[0]: one generator per entry, found list and git",
		"spec.generators[1].scmProvider: give one provider: github, gitlab or gitea",
		"spec.generators[2].merge.generators: a merge needs at least two generators",
		"spec.generators[2].merge.mergeKeys: required",
		"spec.syncPolicy.applicationsSync: \"sometimes\" is not a policy",
		`spec.template.spec.source.pathh: unknown field: did you mean "path"?`,
	} {
		require.Contains(t, err.Error(), want)
	}
}
