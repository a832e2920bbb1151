package kube_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/kube"
)

const region = "us-east-1"

// guestbookDir is argoproj/argocd-example-apps' guestbook, in the shared
// corpus beside the checkout.
var guestbookDir = filepath.Join("..", "..", "..", "shared", "corpus", "argocd-example-apps", "guestbook")

var stack *devenv.Stack

// TestMain starts one real control plane (etcd, kube-apiserver, controllers,
// kwok) for the package. With -short only the unit tests run.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: []string{region}}, &stack))
}

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// env is one test's cluster, namespace and app name (the same string).
type env struct {
	t       testing.TB
	ctx     context.Context
	cluster *kube.Cluster
	dyn     dynamic.Interface
	ns      string
}

// newEnv connects to the stack's region and makes a namespace for the test,
// deleted when it ends.
func newEnv(t testing.TB) *env {
	t.Helper()
	if stack == nil {
		t.Skip("-short: no control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cfg, err := kube.LoadConfig(stack.Kubeconfig, region)
	require.NoError(t, err)
	cluster, err := kube.NewCluster(cfg)
	require.NoError(t, err)
	e := &env{t: t, ctx: ctx, cluster: cluster, dyn: cluster.Dynamic(), ns: "kube-" + randomSuffix(t)}
	nsObj := &unstructured.Unstructured{}
	nsObj.SetAPIVersion("v1")
	nsObj.SetKind("Namespace")
	nsObj.SetName(e.ns)
	_, err = e.dyn.Resource(namespaces).Create(ctx, nsObj, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = e.dyn.Resource(namespaces).Delete(context.Background(), e.ns, metav1.DeleteOptions{})
	})
	return e
}

func randomSuffix(t testing.TB) string {
	b := make([]byte, 4)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// guestbook reads the guestbook manifests: a Deployment and a Service.
func guestbook(t testing.TB) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(guestbookDir, "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the shared corpus must be beside the checkout: %s", guestbookDir)
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		objs = append(objs, decode(t, string(data)))
	}
	return objs
}

func decode(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(manifest))
	require.NoError(t, err)
	obj := &unstructured.Unstructured{}
	require.NoError(t, obj.UnmarshalJSON(js))
	return obj
}

func (e *env) apply(objs []*unstructured.Unstructured, mod func(*kube.ApplyRequest)) (*kube.ChangeSet, error) {
	req := kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: objs}
	if mod != nil {
		mod(&req)
	}
	return e.cluster.Apply(e.ctx, req)
}

func (e *env) compare(objs []*unstructured.Unstructured, previous []app.ResourceKey) []kube.ResourceState {
	e.t.Helper()
	states, err := e.cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs, Inventory: previous})
	require.NoError(e.t, err)
	return states
}

// actions maps "Kind/name" to the action of each change.
func actions(cs *kube.ChangeSet) map[string]string {
	out := map[string]string{}
	for _, c := range cs.Entries {
		out[c.Key.Kind+"/"+c.Key.Name] = string(c.Action)
	}
	return out
}

// syncs maps "Kind/name" to each state's sync status.
func syncs(states []kube.ResourceState) map[string]app.SyncStatusCode {
	out := map[string]app.SyncStatusCode{}
	for _, s := range states {
		out[s.Key.Kind+"/"+s.Key.Name] = s.Sync
	}
	return out
}

func keys(cs *kube.ChangeSet) []app.ResourceKey {
	var out []app.ResourceKey
	for _, c := range cs.Entries {
		out = append(out, c.Key)
	}
	return out
}

func (e *env) exists(gvr schema.GroupVersionResource, name string) bool {
	e.t.Helper()
	_, err := e.dyn.Resource(gvr).Namespace(e.ns).Get(e.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(e.t, err)
	return true
}

// eventually polls cond every 100 ms until it holds or the test's time is up.
func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	for !cond() {
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("timed out waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// invalidDeployment is a Deployment "bad" the API server refuses:
// spec.replicas -1.
func invalidDeployment(t testing.TB) *unstructured.Unstructured {
	t.Helper()
	return decode(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: bad}
spec:
  replicas: -1
  selector: {matchLabels: {app: bad}}
  template:
    metadata: {labels: {app: bad}}
    spec:
      containers: [{name: c, image: busybox}]
`)
}

func configMap(name string, labels, annotations map[string]string) *unstructured.Unstructured {
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName(name)
	cm.SetLabels(labels)
	cm.SetAnnotations(annotations)
	_ = unstructured.SetNestedStringMap(cm.Object, map[string]string{"greeting": "hello"}, "data")
	return cm
}
