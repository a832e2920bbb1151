package argoimport

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/kube"
)

func decode(t *testing.T, doc string) unstructured.Unstructured {
	t.Helper()
	var u unstructured.Unstructured
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	return u
}

// clusterSecret is a cluster Secret as the API server returns it: data
// base64-encoded.
func clusterSecret(t *testing.T, name string, data map[string]string) unstructured.Unstructured {
	t.Helper()
	enc := map[string]any{}
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	return unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": "argocd",
			"labels": map[string]any{secretTypeLabel: "cluster", "env": "prod"}},
		"data": enc,
	}}
}

const guestbook = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
spec:
  project: default
  source: {repoURL: https://git.example.com/apps.git, targetRevision: main, path: guestbook}
  destination: {server: https://kubernetes.default.svc, namespace: guestbook}
  syncPolicy:
    automated: {prune: true, selfHeal: true}
    syncOptions: [CreateNamespace=true]
status:
  sync: {status: Synced}
operation:
  sync: {revision: main}
`

// TestPlanCarriesAnInstallation: clusters become regions (the one Argo
// CD runs in, in-cluster) with their credentials in a kubeconfig; an
// Application arrives in shadow, its automated policy and finalizers kept
// aside, its status, operation and last-applied annotation left behind.
func TestPlanCarriesAnInstallation(t *testing.T) {
	in := &Installation{Namespace: "argocd", Server: "https://10.0.0.1:6443",
		Clusters: []unstructured.Unstructured{
			clusterSecret(t, "home", map[string]string{"name": "us-east-1", "server": "https://10.0.0.1:6443",
				"config": `{"bearerToken":"t0ken","tlsClientConfig":{"caData":"Y2E="}}`}),
			clusterSecret(t, "eu", map[string]string{"name": "eu-west-1", "server": "https://10.0.1.1:6443", "project": "team-a",
				"config": `{"execProviderConfig":{"command":"get-token","args":["--cluster","eu"],"apiVersion":"client.authentication.k8s.io/v1beta1"}}`}),
		},
		Applications: []unstructured.Unstructured{decode(t, guestbook)},
	}
	p := MakePlan(in, nil, "ferry")
	require.Empty(t, p.Problems)

	require.Len(t, p.Regions.File.Regions, 2)
	home, eu := p.Regions.File.Regions[0], p.Regions.File.Regions[1]
	assert.True(t, home.InCluster)
	assert.Equal(t, map[string]string{"env": "prod"}, home.Labels)
	assert.Equal(t, "team-a", eu.Project)
	assert.Equal(t, "t0ken", p.Regions.Kubeconfig.AuthInfos["us-east-1"].Token)
	assert.Equal(t, []byte("ca"), p.Regions.Kubeconfig.Clusters["us-east-1"].CertificateAuthorityData)
	assert.Equal(t, "get-token", p.Regions.Kubeconfig.AuthInfos["eu-west-1"].Exec.Command)

	require.Len(t, p.Objects, 1)
	obj := p.Objects[0]
	assert.Equal(t, "ferry", obj.GetNamespace())
	assert.Empty(t, obj.GetFinalizers(), "in shadow, deleting the app deletes nothing")
	_, automated, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "syncPolicy", "automated")
	assert.False(t, automated, "in shadow, Ferry does not sync it by itself")
	opts, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "syncPolicy", "syncOptions")
	assert.Equal(t, []string{"CreateNamespace=true"}, opts)
	for _, gone := range []string{"status", "operation"} {
		assert.NotContains(t, obj.Object, gone)
	}
	var s Shadow
	require.NoError(t, json.Unmarshal([]byte(obj.GetAnnotations()[AnnotationShadow]), &s))
	assert.Equal(t, Shadow{From: "argocd/guestbook", Automated: map[string]any{"prune": true, "selfHeal": true},
		Finalizers: []string{"resources-finalizer.argocd.argoproj.io"}}, s)
	assert.NotContains(t, obj.GetAnnotations(), "kubectl.kubernetes.io/last-applied-configuration")
}

// TestPlanNamesWhatItCannotCarry: every object and field Ferry cannot
// carry is named, all at once.
func TestPlanNamesWhatItCannotCarry(t *testing.T) {
	app := decode(t, guestbook)
	app.SetName("owned")
	app.SetOwnerReferences(nil)
	_ = unstructured.SetNestedField(app.Object, "nope", "spec", "sourcee")
	owned := decode(t, guestbook)
	owned.SetName("generated")
	owned.Object["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "argoproj.io/v1alpha1",
		"kind": "ApplicationSet", "name": "elsewhere", "uid": "1"}}
	in := &Installation{Namespace: "argocd", Server: "https://10.0.0.1:6443",
		Clusters: []unstructured.Unstructured{
			clusterSecret(t, "eks", map[string]string{"name": "eks", "server": "https://eks.example.com", "namespaces": "a,b",
				"config": `{"awsAuthConfig":{"clusterName":"prod"},"proxyUrl":"http://proxy:3128","tlsClientConfig":{"caData":"Y2E=","keyPassphrase":"x"}}`}),
		},
		Applications: []unstructured.Unstructured{app, owned},
		ApplicationSets: []unstructured.Unstructured{decode(t, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fleet, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - list:
      elements: [{env: a}]
      template: {spec: {syncPolicy: {automated: {}}}}
  strategy: {type: RollingSync, rollingSync: {steps: [{matchExpressions: [{key: env, operator: In, values: [a]}]}]}}
  templatePatch: '{"spec": {"syncPolicy": {"automated": {}}}}'
  template:
    metadata: {name: 'fleet-{{.env}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: guestbook, targetRevision: main}
      destination: {name: us-east-1, namespace: '{{.env}}'}
      sourcee: nope
`)},
	}
	var got []string
	for _, p := range MakePlan(in, nil, "ferry").Problems {
		got = append(got, p.Object+" "+p.Field)
	}
	assert.ElementsMatch(t, []string{
		"Secret argocd/eks data.namespaces",
		"Secret argocd/eks data.config.awsAuthConfig",
		"Secret argocd/eks data.config.proxyUrl",
		"Secret argocd/eks data.config.tlsClientConfig.keyPassphrase",
		"ApplicationSet argocd/fleet spec.templatePatch",
		"ApplicationSet argocd/fleet spec.strategy",
		"ApplicationSet argocd/fleet spec.generators[0].list.template.spec.syncPolicy",
		"ApplicationSet argocd/fleet spec.template.spec.sourcee",
		"Application argocd/owned spec.sourcee",
		"Application argocd/generated metadata.ownerReferences",
	}, got)
}

// TestPlanCarriesAnApplicationSetInShadow: the set keeps its template's
// automated policy and finalizers aside and marks the apps it generates
// in shadow; Argo CD's Applications it owns are not imported one by one.
func TestPlanCarriesAnApplicationSetInShadow(t *testing.T) {
	set := decode(t, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fleet, namespace: argocd, uid: "9"}
spec:
  generators: [{list: {elements: [{env: a}, {env: b}]}}]
  template:
    metadata: {name: 'fleet-{{env}}', finalizers: [resources-finalizer.argocd.argoproj.io]}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: guestbook, targetRevision: main}
      destination: {name: us-east-1, namespace: '{{env}}'}
      syncPolicy: {automated: {prune: true}, syncOptions: [CreateNamespace=true]}
`)
	generated := decode(t, guestbook)
	generated.SetName("fleet-a")
	generated.Object["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "argoproj.io/v1alpha1",
		"kind": "ApplicationSet", "name": "fleet", "uid": "9"}}
	in := &Installation{Namespace: "argocd", Server: "https://10.0.0.1:6443",
		Applications: []unstructured.Unstructured{generated}, ApplicationSets: []unstructured.Unstructured{set}}
	plan := MakePlan(in, nil, "ferry")
	require.Empty(t, plan.Problems)
	assert.Equal(t, 1, plan.Sets)
	assert.Equal(t, 1, plan.Generated)
	assert.Equal(t, 0, plan.Apps, "fleet-a is the set's to generate")
	require.Len(t, plan.Objects, 1)
	obj := plan.Objects[0]
	assert.Equal(t, "ferry", obj.GetNamespace())
	var s Shadow
	require.NoError(t, json.Unmarshal([]byte(obj.GetAnnotations()[AnnotationShadow]), &s))
	assert.Equal(t, Shadow{From: "argocd/fleet", Automated: map[string]any{"prune": true},
		Finalizers: []string{"resources-finalizer.argocd.argoproj.io"}}, s)
	_, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "template", "spec", "syncPolicy", "automated")
	assert.False(t, found, "the template syncs nothing")
	_, found, _ = unstructured.NestedFieldNoCopy(obj.Object, "spec", "template", "metadata", "finalizers")
	assert.False(t, found)
	mark, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "metadata", "annotations", AnnotationShadow)
	var apps Shadow
	require.NoError(t, json.Unmarshal([]byte(mark), &apps))
	assert.Equal(t, "argocd/fleet-a", apps.argoApp("fleet-a"), "each generated app's peer is Argo CD's app of its name")
}

// TestReportDifferences: the report names a differing sync status and
// resource, counts an object that differs only in Ferry's tracking as
// Synced, and leaves Argo CD's hooks out.
func TestReportDifferences(t *testing.T) {
	ferry := decode(t, `status:
  sync: {status: OutOfSync, revision: abc}
  resources:
  - {group: apps, kind: Deployment, namespace: web, name: web, status: OutOfSync, message: "`+kube.MessageUntracked+`"}
  - {kind: Service, namespace: web, name: web, status: OutOfSync, message: "differs at spec.ports"}
`)
	argo := decode(t, `status:
  sync: {status: Synced, revision: abc}
  resources:
  - {group: apps, kind: Deployment, namespace: web, name: web, status: Synced}
  - {kind: Service, namespace: web, name: web, status: Synced}
  - {group: batch, kind: Job, namespace: web, name: migrate, hook: true}
`)
	assert.Equal(t, []string{
		"sync: Ferry OutOfSync, Argo CD Synced",
		"/Service web/web: Ferry OutOfSync, Argo CD Synced (Ferry: differs at spec.ports)",
	}, differences(ferryState(&ferry), syncState(&argo)))

	ferry = decode(t, `status:
  sync: {status: OutOfSync, revision: abc}
  resources:
  - {group: apps, kind: Deployment, namespace: web, name: web, status: OutOfSync, message: "`+kube.MessageUntracked+`"}
  - {kind: Service, namespace: web, name: web, status: Synced}
`)
	assert.Empty(t, differences(ferryState(&ferry), syncState(&argo)))
}
