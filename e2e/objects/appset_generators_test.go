package objects

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/ferryclient"
)

// setTemplate is the template of the sets below: one app per parameter
// set, named by name, to the region dest, without automated sync.
const setTemplate = `  template:
    metadata:
      name: '%s'
      annotations: {made-by: set}
    spec:
      project: default
      source: {repoURL: %s, targetRevision: HEAD, path: app}
      destination: {name: '%s', namespace: generated}
`

// waitApps waits until the apps present exist and those absent do not.
func waitApps(t *testing.T, e *e2etest.Env, what string, present, absent []string) {
	t.Helper()
	c := e.TemporalClient(t)
	e2etest.Eventually(t, 2*time.Minute, what, func() (bool, string) {
		var state []string
		ok := true
		for _, n := range present {
			_, err := e2etest.Query(c, n)
			ok = ok && err == nil
			state = append(state, fmt.Sprintf("%s: %v", n, err))
		}
		for _, n := range absent {
			_, err := e2etest.Query(c, n)
			ok = ok && err != nil && strings.Contains(err.Error(), "not found")
			state = append(state, fmt.Sprintf("%s: %v", n, err))
		}
		return ok, strings.Join(state, "; ")
	})
}

func setRepo(t *testing.T, e *e2etest.Env, name string) string {
	repo := e.NewRepo(t, name)
	repo.Write(map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: generated}\ndata: {v: one}\n"})
	repo.CommitAndPush("one")
	return repo.URL
}

const placementCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: placementdecisions.cluster.ferry.test}
spec:
  group: cluster.ferry.test
  names: {kind: PlacementDecision, plural: placementdecisions, singular: placementdecision, listKind: PlacementDecisionList}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`

const placementConfig = `apiVersion: v1
kind: ConfigMap
metadata: {name: ferry-placement}
data: {apiVersion: cluster.ferry.test/v1beta1, kind: placementdecisions, statusListKey: decisions, matchKey: clusterName}
`

func placementDecision(clusters ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: cluster.ferry.test/v1beta1\nkind: PlacementDecision\nmetadata: {name: web-placement, labels: {placement: web}}\nstatus:\n  decisions:\n")
	for _, c := range clusters {
		fmt.Fprintf(&b, "  - {clusterName: %s, reason: chosen}\n", c)
	}
	return b.String()
}

// TestClusterDecisionResourceSet: a clusterDecisionResource set over a
// duck-typed resource of the control namespace (a CRD of the test) makes
// one app per decided region, and follows a change of the decisions.
func TestClusterDecisionResourceSet(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	url := setRepo(t, e, "decided-set")
	mustKubectl(t, placementCRD, "apply", "-f", "-")
	t.Cleanup(func() {
		_, _ = kubectl(t, "", "delete", "crd", "placementdecisions.cluster.ferry.test", "--wait=false")
	})
	mustKubectl(t, "", "wait", "--for", "condition=established", "--timeout", "60s", "crd/placementdecisions.cluster.ferry.test")
	mustKubectl(t, placementConfig, "apply", "-f", "-")
	mustKubectl(t, placementDecision("us-east-1"), "apply", "-f", "-")

	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: decided, namespace: argocd}
spec:
  generators:
  - clusterDecisionResource:
      configMapRef: ferry-placement
      labelSelector: {matchLabels: {placement: web}}
      requeueAfterSeconds: 5
` + fmt.Sprintf(setTemplate, "decided-{{name}}-{{reason}}", url, "{{name}}")
	mustKubectl(t, set, "apply", "-f", "-")
	t.Cleanup(func() { _, _ = kubectl(t, "", "delete", "applicationset", "decided", "--wait=false") })
	waitApps(t, e, "an app for the decided region", []string{"decided-us-east-1-chosen"}, []string{"decided-eu-west-1-chosen"})

	mustKubectl(t, placementDecision("eu-west-1"), "apply", "-f", "-")
	waitApps(t, e, "the app follows the decision", []string{"decided-eu-west-1-chosen"}, []string{"decided-us-east-1-chosen"})
}

// TestPluginGeneratorSet: a plugin generator asks an HTTP service of the
// operator's with the token of a Secret, and makes the apps of its answer;
// when the service answers 500 the set keeps its apps and says why.
func TestPluginGeneratorSet(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	url := setRepo(t, e, "plugin-set")
	const token = "plugin-e2e-token-4711"
	var failing atomic.Bool
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/getparams.execute" || r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"message": "unauthorized"}`, http.StatusUnauthorized)
			return
		}
		asked.Add(1)
		if failing.Load() {
			http.Error(w, `{"message": "inventory down"}`, http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte(`{"output": {"parameters": [{"app": "plug-a", "region": "us-east-1"}, {"app": "plug-b", "region": "eu-west-1"}]}}`))
	}))
	t.Cleanup(srv.Close)
	mustKubectl(t, "", "create", "secret", "generic", "plugin-e2e-token", "--from-literal=token="+token)
	t.Cleanup(func() { _, _ = kubectl(t, "", "delete", "secret", "plugin-e2e-token") })
	mustKubectl(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plugin-e2e}\ndata: {baseUrl: %q, token: '$plugin-e2e-token:token'}\n", srv.URL), "apply", "-f", "-")

	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: plugged, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - plugin:
      configMapRef: {name: plugin-e2e}
      input: {parameters: {team: blue}}
      requeueAfterSeconds: 5
` + fmt.Sprintf(setTemplate, "{{.app}}-{{.generator.input.parameters.team}}", url, "{{.region}}")
	mustKubectl(t, set, "apply", "-f", "-")
	t.Cleanup(func() { _, _ = kubectl(t, "", "delete", "applicationset", "plugged", "--wait=false") })
	waitApps(t, e, "the plugin's apps", []string{"plug-a-blue", "plug-b-blue"}, nil)

	failing.Store(true)
	before := asked.Load()
	c := e.TemporalClient(t)
	e2etest.Eventually(t, 2*time.Minute, "the set says the plugin failed", func() (bool, string) {
		v, err := ferryclient.GetAppSet(context.Background(), c, "plugged")
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range v.Status.Conditions {
			if cond.Type == contract.AppSetErrorOccurred && cond.Status == "True" {
				require.NotContains(t, cond.Message, token)
				return asked.Load() > before && strings.Contains(cond.Message, "500 Internal Server Error: inventory down"), cond.Message
			}
		}
		return false, fmt.Sprintf("%+v", v.Status.Conditions)
	})
	waitApps(t, e, "the apps stay while the plugin fails", []string{"plug-a-blue", "plug-b-blue"}, nil)
}

// TestPreservedFieldsKeepAnnotation: an annotation a user adds to a set's
// app stays when the set writes the app again, when preservedFields names
// it; another annotation the user added goes, as in Argo CD.
func TestPreservedFieldsKeepAnnotation(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	url := setRepo(t, e, "preserved-set")
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: keeper, namespace: argocd}
spec:
  preservedFields: {annotations: [team]}
  generators:
  - list: {elements: [{name: keeper-one, region: us-east-1}]}
` + fmt.Sprintf(setTemplate, "{{name}}", url, "{{region}}")
	mustKubectl(t, set, "apply", "-f", "-")
	t.Cleanup(func() { _, _ = kubectl(t, "", "delete", "applicationset", "keeper", "--wait=false") })
	waitApps(t, e, "the set's app", []string{"keeper-one"}, nil)

	e.MustFerry(t, "app", "patch", "keeper-one", "--patch",
		`[{"op": "add", "path": "/metadata/annotations/team", "value": "blue"}, {"op": "add", "path": "/metadata/annotations/stray", "value": "x"}]`)
	c := e.TemporalClient(t)
	v, err := e2etest.Query(c, "keeper-one")
	require.NoError(t, err)
	require.Equal(t, "blue", v.Metadata.Annotations["team"])
	require.Equal(t, "x", v.Metadata.Annotations["stray"])
	require.Equal(t, &contract.Owner{AppSet: "keeper"}, v.Owner, "the app stays the set's")

	e.MustFerry(t, "appset", "refresh", "keeper")
	e2etest.Eventually(t, time.Minute, "the set writes its app again, keeping team", func() (bool, string) {
		v, err := e2etest.Query(c, "keeper-one")
		if err != nil {
			return false, err.Error()
		}
		a := v.Metadata.Annotations
		_, stray := a["stray"]
		return !stray && a["team"] == "blue" && a["made-by"] == "set", fmt.Sprint(a)
	})
}
