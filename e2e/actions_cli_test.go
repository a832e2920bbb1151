package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// argocdCMActions is an argocd-cm with a Lua action for the Widget CRD.
const argocdCMActions = `apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
data:
  resource.customizations.actions.example.com_Widget: |
    definitions:
    - name: unjam
      action.lua: |
        obj.spec.state = "turning"
        return obj
`

// TestAppActions: ferry app actions run, through the kubeconfig: a Lua
// action of an argocd-cm patches a custom resource in every region, and the
// built-in restart sets the pod template annotation of a Deployment.
func TestAppActions(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "actions")
	repo.write(map[string]string{
		"app/crd.yaml":    widgetCRD,
		"app/widget.yaml": widget("jammed"),
		"app/web.yaml":    logsDeployment,
	})
	sha := repo.commitAndPush("a widget and a Deployment")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("actions", repo.URL, "app", "actions", false, "3m")))
	mustFerry(t, "app", "sync", "actions", "--wait")
	waitApp(t, "actions", sha, 3*time.Minute)
	cm := writeFile(t, argocdCMActions)

	require.Contains(t, mustFerry(t, "app", "actions", "list", "actions", "--kind", "Widget", "--resource-customizations", cm), "unjam")
	out := mustFerry(t, "app", "actions", "run", "actions", "unjam", "--kind", "Widget", "--resource-name", "gear", "--resource-customizations", cm)
	require.Contains(t, out, "patched example.com/Widget actions/gear", out)
	ctx := context.Background()
	gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	for _, r := range regions {
		cfg, err := stack.RestConfig(r)
		require.NoError(t, err)
		dc, err := dynamic.NewForConfig(cfg)
		require.NoError(t, err)
		w, err := dc.Resource(gvr).Namespace("actions").Get(ctx, "gear", metav1.GetOptions{})
		require.NoError(t, err)
		state, _, _ := unstructured.NestedString(w.Object, "spec", "state")
		require.Equal(t, "turning", state, "the action patched the Widget in %s", r)
	}

	out = mustFerry(t, "app", "actions", "run", "actions", "restart", "--kind", "Deployment", "--resource-name", "web", "--region", regions[0])
	require.Contains(t, out, "restarted", out)
	d, err := kubeClient(t, regions[0]).AppsV1().Deployments("actions").Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"], "restart annotated the pod template")
	d, err = kubeClient(t, regions[1]).AppsV1().Deployments("actions").Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	require.Empty(t, d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"], "--region: the other region is untouched")

	bad, err := ferry(t, "app", "actions", "run", "actions", "explode", "--kind", "Deployment", "--resource-name", "web")
	require.Error(t, err, bad)
	require.True(t, strings.Contains(bad, "the built-in one is restart"), bad)
	mustFerry(t, "app", "delete", "actions")
}
