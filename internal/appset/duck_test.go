package appset

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

func placement(name string, labels map[string]any, decisions ...map[string]any) map[string]any {
	var list []any
	for _, d := range decisions {
		list = append(list, d)
	}
	return map[string]any{"kind": "PlacementDecision",
		"metadata": map[string]any{"name": name, "labels": labels},
		"status":   map[string]any{"decisions": list}}
}

func duckControl() *memControl {
	return &memControl{
		configMaps: map[string]map[string]string{
			"ocm-placement": {"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "placementdecisions",
				"statusListKey": "decisions", "matchKey": "clusterName"},
			"no-match-key": {"apiVersion": "cluster.open-cluster-management.io/v1beta1", "kind": "placementdecisions"},
		},
		resources: map[string][]map[string]any{"placementdecisions.cluster.open-cluster-management.io/v1beta1": {
			placement("prod", map[string]any{"placement": "prod"},
				map[string]any{"clusterName": "us-east-1", "reason": "cheap"},
				map[string]any{"clusterName": "unknown-cluster"},
				map[string]any{"clusterName": "ap-south-1", "reason": "near", "weight": 2}),
			placement("staging", map[string]any{"placement": "staging"}, map[string]any{"clusterName": "eu-west-1"}),
			{"kind": "PlacementDecision", "metadata": map[string]any{"name": "pending", "labels": map[string]any{"placement": "prod"}}},
		}},
	}
}

const duckSet = `
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: placed}
spec:
  goTemplate: %t
  generators:
  - clusterDecisionResource:
      configMapRef: ocm-placement
      %s
      values: {tier: 'gold-{{name}}'}
  template:
    metadata: {name: 'guestbook-%s', annotations: {tier: '%s'}}
    spec:
      project: default
      source: {repoURL: https://git.example/apps.git, path: guestbook}
      destination: {server: '%s', namespace: guestbook}
`

// TestClusterDecisionResource: each decision of the selected resources
// that names a region yields the region's name and server and the
// decision's fields as strings, and the values as written, as Argo CD.
func TestClusterDecisionResource(t *testing.T) {
	ctl := duckControl()
	gen := func(goTmpl bool, pick string) (*Result, error) {
		name, tier, server := "{{name}}-{{reason}}", "{{values.tier}}", "{{server}}"
		if goTmpl {
			name, tier, server = "{{.name}}-{{.weight | default \"1\"}}", "{{.values.tier}}", "{{.server}}"
		}
		s := mustRead(sprintf(duckSet, goTmpl, pick, name, tier, server))
		return Generate(context.Background(), s, Options{Clusters: regions3, Control: ctl, Validate: app.ValidateOptions{Regions: testRegions(t)}})
	}
	res, err := gen(false, "labelSelector: {matchLabels: {placement: prod}}")
	require.NoError(t, err)
	require.Equal(t, []string{"guestbook-us-east-1-cheap", "guestbook-ap-south-1-near"}, appNames(res))
	require.Equal(t, "https://us-east-1.example", res.Apps[0].Spec.Destination.Server)
	require.Equal(t, "gold-{{name}}", res.Apps[0].Metadata.Annotations["tier"], "values as written, unrendered, as Argo CD")

	res, err = gen(true, "name: prod")
	require.NoError(t, err)
	require.Equal(t, []string{"guestbook-us-east-1-1", "guestbook-ap-south-1-2"}, appNames(res))
	require.Equal(t, "gold-{{name}}", res.Apps[1].Metadata.Annotations["tier"])

	res, err = gen(false, "labelSelector: {matchExpressions: [{key: placement, operator: In, values: [staging]}]}")
	require.NoError(t, err)
	require.Len(t, res.Apps, 0, "a decision without reason leaves {{reason}} in the name")
	require.Len(t, res.Invalid, 1)
	require.Contains(t, res.Invalid[0], "guestbook-eu-west-1-{{reason}}")

	_, err = gen(false, "name: gone")
	require.ErrorContains(t, err, "no resource gone of placementdecisions in the control namespace")

	ctl.configMaps["ocm-placement"]["matchKey"] = ""
	_, err = gen(false, "name: prod")
	require.ErrorContains(t, err, "spec.generators[0].clusterDecisionResource.configMapRef: ConfigMap ocm-placement: matchKey is missing")

	s := mustRead(sprintf(duckSet, false, "name: prod", "x", "x", "{{server}}"))
	_, err = Generate(context.Background(), s, Options{Clusters: regions3})
	require.ErrorContains(t, err, "reads ConfigMap ocm-placement in the control namespace, and none is configured: run the control worker with --control-namespace")
}

// TestDuckTypeValidation: every problem of the generator at once.
func TestDuckTypeValidation(t *testing.T) {
	_, err := Read([]byte(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: bad}
spec:
  generators:
  - clusterDecisionResource: {requeueAfterSeconds: -1}
  - clusterDecisionResource:
      configMapRef: cm
      name: one
      labelSelector: {matchExpressions: [{key: a, operator: Sometimes}]}
  - plugin: {input: {parameters: {a: 1}}}
  template:
    metadata: {name: x}
    spec: {project: default, source: {repoURL: https://git.example/r.git, path: x}, destination: {name: r, namespace: x}}
`))
	for _, want := range []string{
		"spec.generators[0].clusterDecisionResource.configMapRef: required",
		"spec.generators[0].clusterDecisionResource: give name (one resource) or labelSelector",
		"spec.generators[0].clusterDecisionResource.requeueAfterSeconds: must not be negative",
		"spec.generators[1].clusterDecisionResource: give name or labelSelector, not both",
		`spec.generators[1].clusterDecisionResource.labelSelector.matchExpressions[0].operator: "Sometimes" is not an operator`,
		"spec.generators[2].plugin.configMapRef.name: required",
	} {
		require.ErrorContains(t, err, want)
	}
}

// TestRequeueOfControlGenerators: a clusterDecisionResource generator
// waits the default, a plugin one 30 minutes (Argo CD's defaults); the
// set waits the shortest of its generators', nested ones too, and a
// requeueAfterSeconds overrides a generator's own.
func TestRequeueOfControlGenerators(t *testing.T) {
	secs := func(n int64) *int64 { return &n }
	s := &ApplicationSet{Spec: Spec{Generators: []Generator{
		{Plugin: &PluginGenerator{ConfigMapRef: PluginConfigMapRef{Name: "p"}}},
		{List: &ListGenerator{}},
	}}}
	require.Equal(t, 30*time.Minute, s.Requeue(3*time.Minute), "a plugin alone: Argo CD's 30 minutes")
	s.Spec.Generators = append(s.Spec.Generators, Generator{ClusterDecisionResource: &DuckTypeGenerator{ConfigMapRef: "cm", Name: "x"}})
	require.Equal(t, 3*time.Minute, s.Requeue(3*time.Minute), "a clusterDecisionResource beside it waits the default")
	s.Spec.Generators[2].ClusterDecisionResource.RequeueAfterSeconds = secs(30)
	require.Equal(t, 30*time.Second, s.Requeue(3*time.Minute))
	s.Spec.Generators = append(s.Spec.Generators, Generator{Matrix: &MatrixGenerator{Generators: []Generator{
		{Plugin: &PluginGenerator{RequeueAfterSeconds: secs(7)}}, {List: &ListGenerator{}}}}})
	require.Equal(t, 7*time.Second, s.Requeue(3*time.Minute), "nested in a matrix")
	// Beside a pull request generator (30 minutes of its own), a plugin's
	// shorter interval wins, and a longer one is kept as given.
	s.Spec.Generators = []Generator{
		{PullRequest: &PullRequestGenerator{Github: &PullRequestGitHub{Owner: "o", Repo: "r"}}},
		{Plugin: &PluginGenerator{RequeueAfterSeconds: secs(60)}},
	}
	require.Equal(t, time.Minute, s.Requeue(3*time.Minute))
	s.Spec.Generators[1].Plugin.RequeueAfterSeconds = secs(3600)
	require.Equal(t, 30*time.Minute, s.Requeue(3*time.Minute))
	s.Spec.Generators = s.Spec.Generators[1:]
	require.Equal(t, time.Hour, s.Requeue(3*time.Minute))
}
