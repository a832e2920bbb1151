package appset

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// fileTree is a repository of a few files, for the git generators.
type fileTree map[string]string

func (f fileTree) Dirs() []string { return nil }
func (f fileTree) Files() []string {
	var out []string
	for k := range f {
		out = append(out, k)
	}
	return out
}
func (f fileTree) ReadFile(name string) ([]byte, error)               { return []byte(f[name]), nil }
func (f fileTree) Tree(context.Context, string, string) (Tree, error) { return f, nil }

func generateSet(t *testing.T, set string, src Source) *Result {
	t.Helper()
	s, err := Read([]byte(set))
	require.NoError(t, err)
	res, err := Generate(context.Background(), s, Options{Source: src, Clusters: regions3, Validate: app.ValidateOptions{Regions: testRegions(t)}})
	require.NoError(t, err)
	require.Empty(t, res.Invalid)
	return res
}

// TestTemplatePatchForms: the forms of templatePatch Argo CD's
// documentation shows: a {{- range }} list and an {{- if }} block that
// adds a typed syncPolicy, a JSON patch, spec.sources replaced as a whole
// and a nested map merged, the patch empty when its condition is false.
func TestTemplatePatchForms(t *testing.T) {
	res := generateSet(t, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: guestbook}
spec:
  goTemplate: true
  generators:
  - list:
      elements:
      - {cluster: engineering-dev, region: us-east-1, autoSync: true, prune: true, valueFiles: [values.large.yaml, values.debug.yaml]}
      - {cluster: engineering-prod, region: eu-west-1, autoSync: false, valueFiles: []}
  template:
    metadata:
      name: '{{ .cluster }}-deployment'
      labels: {team: a}
    spec:
      project: default
      source:
        repoURL: https://git.example/cluster-deployments.git
        targetRevision: HEAD
        path: guestbook/{{ .cluster }}
        helm: {releaseName: gb}
      destination:
        name: '{{ .region }}'
        namespace: guestbook
  templatePatch: |
    metadata:
      labels:
        cluster: {{ .cluster | quote }}
    spec:
      source:
        helm:
          valueFiles:
          {{- range $valueFile := .valueFiles }}
            - {{ $valueFile }}
          {{- end }}
    {{- if .autoSync }}
      syncPolicy:
        automated:
          prune: {{ .prune }}
    {{- end }}
`, nil)
	require.Len(t, res.Apps, 2)
	dev, prod := res.Apps[0], res.Apps[1]
	require.Equal(t, []string{"values.large.yaml", "values.debug.yaml"}, dev.Spec.Source.Helm.ValueFiles)
	require.Equal(t, "gb", dev.Spec.Source.Helm.ReleaseName, "a nested map merges")
	require.Equal(t, map[string]string{"team": "a", "cluster": "engineering-dev"}, dev.Metadata.Labels)
	require.NotNil(t, dev.Spec.SyncPolicy)
	require.True(t, dev.Spec.SyncPolicy.Automated.Prune)
	require.Nil(t, prod.Spec.SyncPolicy, "the {{- if }} block left out")
	require.Empty(t, prod.Spec.Source.Helm.ValueFiles)

	res = generateSet(t, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: sources}
spec:
  goTemplate: true
  generators:
  - list: {elements: [{name: multi, chart: podinfo, version: "6.3.2"}, {name: plain}]}
  template:
    metadata: {name: '{{ .name }}'}
    spec:
      project: default
      source: {repoURL: https://git.example/apps.git, targetRevision: HEAD, path: 'apps/{{ .name }}'}
      destination: {name: us-east-1, namespace: '{{ .name }}'}
  templatePatch: |
    {{- if .chart }}
    {"spec": {"source": null, "sources": [
      {"repoURL": "https://charts.example", "chart": {{ .chart | toJson }}, "targetRevision": {{ .version | toJson }}},
      {"repoURL": "https://git.example/values.git", "targetRevision": "HEAD", "ref": "values"}]}}
    {{- end }}
`, nil)
	require.Len(t, res.Apps, 2)
	multi, plain := res.Apps[0], res.Apps[1]
	require.Len(t, multi.Spec.Sources, 2)
	require.Equal(t, "podinfo", multi.Spec.Sources[0].Chart)
	require.Equal(t, "6.3.2", multi.Spec.Sources[0].TargetRevision)
	require.Equal(t, "values", multi.Spec.Sources[1].Ref)
	require.Empty(t, multi.Spec.Source.RepoURL, "null removes spec.source")
	require.Equal(t, "apps/plain", plain.Spec.Source.Path, "an empty patch changes nothing")
}

// TestElementsYaml: a list generator's elements as a YAML string, written
// out or rendered in a matrix from a git file's parameter, as Argo CD's
// documentation shows.
func TestElementsYaml(t *testing.T) {
	tree := fileTree{"list/components.yaml": `key:
  components:
    - name: component1
      chart: podinfo
      version: "6.3.2"
      namespace: component1
    - name: component2
      chart: podinfo
      version: "6.3.3"
      namespace: component2
`}
	res := generateSet(t, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: elements-yaml}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - matrix:
      generators:
      - git:
          repoURL: https://git.example/apps.git
          revision: HEAD
          files: [{path: list/components.yaml}]
      - list:
          elementsYaml: "{{ .key.components | toJson }}"
  template:
    metadata: {name: '{{.name}}'}
    spec:
      project: default
      sources:
      - {chart: '{{.chart}}', repoURL: https://charts.example, targetRevision: '{{.version}}', helm: {releaseName: '{{.name}}'}}
      destination: {name: us-east-1, namespace: '{{.namespace}}'}
`, tree)
	require.Equal(t, []string{"component1", "component2"}, names(res))
	require.Equal(t, "6.3.3", res.Apps[1].Spec.Source.TargetRevision, "one of spec.sources reads as spec.source")

	for _, goTmpl := range []string{"true", "false"} {
		name := "'{{.name}}'"
		if goTmpl == "false" {
			name = "'{{name}}'"
		}
		res = generateSet(t, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: written}
spec:
  goTemplate: `+goTmpl+`
  generators:
  - list:
      elementsYaml: |
        - name: one
        - name: two
  template:
    metadata: {name: `+name+`}
    spec:
      project: default
      source: {repoURL: https://git.example/apps.git, path: x}
      destination: {name: us-east-1, namespace: x}
`, nil)
		require.Equal(t, []string{"one", "two"}, names(res), "goTemplate %s", goTmpl)
	}
}
