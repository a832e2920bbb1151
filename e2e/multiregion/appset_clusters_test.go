package multiregion

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/ferryclient"
	regionscfg "github.com/ferry-gitops/ferry/internal/regions"
)

// tiers are the labels the test gives the regions: the clusters
// generators below select gold and silver, not bronze.
var tiers = map[string]string{"us-east-1": "gold", "eu-west-1": "silver", "ap-south-1": "bronze"}

// tieredRegionsConfig is the stack's regions configuration with a tier
// label on each region.
func tieredRegionsConfig(t *testing.T, e *e2etest.Env) string {
	t.Helper()
	data, err := os.ReadFile(e.Stack.RegionsConfig)
	require.NoError(t, err)
	var f regionscfg.File
	require.NoError(t, yaml.Unmarshal(data, &f))
	for i := range f.Regions {
		f.Regions[i].Labels["tier"] = tiers[f.Regions[i].Name]
	}
	out, err := f.Marshal()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "regions.yaml")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	return path
}

const tierChart = `apiVersion: v2
name: tiered
version: 0.1.0
`

const tierConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: tier
data:
  tier: {{ .Values.tier | quote }}
  region: {{ .Values.region | quote }}
`

// clustersAppSet: one app per region labelled gold or silver, rendering
// the chart with the region's values.
func clustersAppSet(repoURL string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: tiers
spec:
  generators:
  - clusters:
      selector:
        matchLabels: {ferry.dev/stack: dev}
        matchExpressions: [{key: tier, operator: In, values: [gold, silver]}]
      values:
        tier: '{{metadata.labels.tier}}'
  template:
    metadata:
      name: 'tier-{{name}}'
    spec:
      project: default
      source:
        repoURL: %s
        targetRevision: main
        path: chart
        helm:
          parameters:
          - {name: tier, value: '{{values.tier}}'}
          - {name: region, value: '{{name}}'}
      destination: {server: '{{server}}', namespace: tiers}
      syncPolicy:
        automated: {prune: true}
        syncOptions: [CreateNamespace=true]
`, repoURL)
}

// matrixAppSet: the gold and silver regions × the directories of apps/.
func matrixAppSet(repoURL string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: grid
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - matrix:
      generators:
      - clusters:
          selector:
            matchExpressions: [{key: tier, operator: NotIn, values: [bronze]}]
      - git:
          repoURL: %s
          revision: main
          directories: [{path: 'apps/*'}]
  template:
    metadata:
      name: '{{.path.basename}}-{{.name}}'
    spec:
      project: default
      source: {repoURL: %s, targetRevision: main, path: '{{.path.path}}'}
      destination: {name: '{{.name}}', namespace: 'grid-{{.path.basename}}'}
      syncPolicy:
        automated: {prune: true}
        syncOptions: [CreateNamespace=true]
`, repoURL, repoURL)
}

// TestAppSetClustersAndMatrix: over three regions labelled gold, silver
// and bronze, a clusters generator selecting gold and silver creates one
// app per such region, each with its region's values in its manifests, and
// none for bronze; a matrix of those regions × two git directories
// creates the four apps of the product.
func TestAppSetClustersAndMatrix(t *testing.T) {
	e := newEnv(t)
	e.StartWorkerEnv(t, []string{"FERRY_REGIONS_CONFIG=" + tieredRegionsConfig(t, e)}, e.AllRoles()...)
	repo := e.NewRepo(t, "appset-tiers")
	repo.Write(map[string]string{
		"chart/Chart.yaml": tierChart, "chart/values.yaml": "tier: none\nregion: none\n", "chart/templates/cm.yaml": tierConfigMap,
		"apps/web/cm.yaml": configMap("web", "v1"), "apps/api/cm.yaml": configMap("api", "v1"),
	})
	sha := repo.CommitAndPush("a chart and two app directories")
	c := e.TemporalClient(t)

	e.MustFerry(t, "appset", "apply", "-f", e2etest.WriteFile(t, "tiers.yaml", clustersAppSet(repo.URL)))
	selected := []string{"us-east-1", "eu-west-1"}
	for _, r := range selected {
		st := inRegion(e, r).WaitApp(t, "tier-"+r, sha, 3*time.Minute)
		require.Equal(t, []string{r}, slices.Collect(maps.Keys(st.Regions)), "tier-%s deploys to its region only", r)
		cm, err := e.KubeClient(t, r).CoreV1().ConfigMaps("tiers").Get(context.Background(), "tier", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, map[string]string{"tier": tiers[r], "region": r}, cm.Data, "the values of %s", r)
	}
	e2etest.Eventually(t, time.Minute, "the set lists exactly its two apps", func() (bool, string) {
		v, err := ferryclient.GetAppSet(context.Background(), c, "tiers")
		if err != nil {
			return false, err.Error()
		}
		var names []string
		for _, r := range v.Status.Resources {
			names = append(names, r.Name)
		}
		slices.Sort(names)
		return slices.Equal(names, []string{"tier-eu-west-1", "tier-us-east-1"}), fmt.Sprint(names)
	})
	_, err := e2etest.Query(c, "tier-ap-south-1")
	require.Error(t, err, "no app for the bronze region")
	_, err = e.KubeClient(t, "ap-south-1").CoreV1().ConfigMaps("tiers").Get(context.Background(), "tier", metav1.GetOptions{})
	require.Error(t, err, "nothing deployed to the bronze region")

	e.MustFerry(t, "appset", "apply", "-f", e2etest.WriteFile(t, "grid.yaml", matrixAppSet(repo.URL)))
	for _, d := range []string{"web", "api"} {
		for _, r := range selected {
			inRegion(e, r).WaitApp(t, d+"-"+r, sha, 3*time.Minute)
			cm, err := e.KubeClient(t, r).CoreV1().ConfigMaps("grid-"+d).Get(context.Background(), d, metav1.GetOptions{})
			require.NoError(t, err, "%s-%s deployed", d, r)
			require.Equal(t, "v1", cm.Data["version"])
		}
		_, err := e2etest.Query(c, d+"-ap-south-1")
		require.Error(t, err, "the product leaves out the bronze region")
	}
	v, err := ferryclient.GetAppSet(context.Background(), c, "grid")
	require.NoError(t, err)
	require.Len(t, v.Status.Resources, 4, "2 regions × 2 directories")

	for _, s := range []string{"tiers", "grid"} {
		e.MustFerry(t, "appset", "delete", s)
	}
}

// inRegion is e for an app of one region: WaitApp looks at that region.
func inRegion(e *e2etest.Env, region string) *e2etest.Env {
	return &e2etest.Env{Stack: e.Stack, Regions: []string{region}}
}
