//go:build argocd

package argocd

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/kube"
)

var appSetResource = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets"}

// TestTakeoverOfAnApplicationSet: Argo CD's ApplicationSet controller
// generates two apps of the example guestbook, which Argo CD syncs; ferry
// import brings the set over in shadow (its apps are Ferry's set's to
// generate, not imported one by one); the report shows Ferry's compare of
// both agrees with Argo CD's; the set's takeover deletes Argo CD's set and
// apps and nothing they managed, and Ferry's apps sync without recreating
// an object or restarting a Pod.
func TestTakeoverOfAnApplicationSet(t *testing.T) {
	e := newEnv(t)
	repo := e.NewRepo(t, "argocd-appset")
	repo.CopyDir(filepath.Join(corpus, "guestbook"), "guestbook")
	sha := repo.CommitAndPush("guestbook")
	envs := []string{"appset-a", "appset-b"}
	set := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fleet, namespace: %s}
spec:
  generators: [{list: {elements: [{env: a}, {env: b}]}}]
  template:
    metadata: {name: 'appset-{{env}}', finalizers: [resources-finalizer.argocd.argoproj.io]}
    spec:
      project: default
      source: {repoURL: %q, path: guestbook, targetRevision: main}
      destination: {name: %s, namespace: 'appset-{{env}}'}
      syncPolicy: {automated: {prune: true}, syncOptions: [CreateNamespace=true]}
`, devenv.ArgoCDNamespace, repo.URL, argoCD.Home)), &set.Object))
	argoSets := argoClient(t).Resource(appSetResource).Namespace(devenv.ArgoCDNamespace)
	_, err := argoSets.Create(context.Background(), set, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, name := range envs {
		e2etest.Eventually(t, 4*time.Minute, "Argo CD: "+name+" Synced", func() (bool, string) {
			a, err := getArgoApp(t, name)
			if err != nil {
				return false, err.Error()
			}
			return a.Sync == "Synced" && a.Revision == sha && a.Health == "Healthy", a.String()
		})
	}
	home := kubeClient(t, argoCD.Home)
	before := workloads(t, home, envs...)
	require.NotEmpty(t, before)

	dir := t.TempDir()
	out := e.MustFerry(t, "import", "--from-context", argoCD.Home, "--out", dir)
	assert.Contains(t, out, "1 ApplicationSets, in shadow: they generate their 2 apps, in shadow too.")
	rc, err := stack.RestConfig(stack.ControlContext)
	require.NoError(t, err)
	ferrySets := dynamic.NewForConfigOrDie(rc).Resource(appSetResource).Namespace(stack.ControlNamespace)
	t.Cleanup(func() { _ = ferrySets.Delete(context.Background(), "fleet", metav1.DeleteOptions{}) })
	e.StartWorker(t, append(e.AllRoles(), "--regions-config", filepath.Join(dir, "regions.yaml"))...)

	// In shadow: compared, never written.
	e2etest.Eventually(t, 4*time.Minute, "the report shows no difference", func() (bool, string) {
		out, err := e.Ferry(t, "import", "report", "--from-context", argoCD.Home)
		return err == nil, out
	})
	out = e.MustFerry(t, "import", "report", "--from-context", argoCD.Home)
	for _, name := range envs {
		assert.Contains(t, out, name+": same (Synced at "+sha[:7]+")")
	}
	c := e.TemporalClient(t)
	for _, name := range envs {
		v, err := e2etest.Query(c, name)
		require.NoError(t, err)
		assert.True(t, v.InShadow(), "%s is in shadow", name)
		assert.Nil(t, v.Status.OperationState, "%s: no operation in shadow", name)
	}
	for _, o := range allObjects(t, home, envs...) {
		assert.Empty(t, o.GetLabels()[kube.LabelApp], "%s/%s written in shadow", o.Kind, o.GetName())
	}

	e.MustFerry(t, "appset", "takeover", "--from-context", argoCD.Home, "fleet")
	_, err = argoSets.Get(context.Background(), "fleet", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "Argo CD's ApplicationSet is gone: %v", err)
	for _, name := range envs {
		_, err := getArgoApp(t, name)
		assert.True(t, apierrors.IsNotFound(err), "Argo CD's Application %s is gone: %v", name, err)
		e2etest.Eventually(t, 3*time.Minute, name+" synced by Ferry", func() (bool, string) {
			v, err := e2etest.Query(c, name)
			if err != nil {
				return false, err.Error()
			}
			op := v.Status.OperationState
			return !v.InShadow() && v.Status.Sync.Status == app.SyncStatusSynced && op != nil && op.Phase == app.OperationSucceeded,
				e2etest.Describe(&v.Status)
		})
	}
	for _, o := range allObjects(t, home, envs...) {
		assert.NotEmpty(t, o.GetLabels()[kube.LabelApp], "%s %s/%s is Ferry's", o.Kind, o.GetNamespace(), o.GetName())
	}
	assert.Equal(t, before, workloads(t, home, envs...), "the same Deployments, ReplicaSets, Pods (and their restarts) and Services")
}
