package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDeleteAppOfAppsCascadesToItsChildren: `ferry app delete PARENT`
// cascades by default to the child apps it created, each as its own
// finalizers say: tree-a (resources finalizer) goes with its ConfigMap;
// tree-b (none) goes and leaves its ConfigMap, as in Argo CD; tree-c, an
// app of apps with the finalizer, goes with its own child tree-c1 and that
// one's ConfigMap.
func TestDeleteAppOfAppsCascadesToItsChildren(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "tree")
	noFinalizer := func(y string) string {
		return strings.Replace(y, "  finalizers: [resources-finalizer.argocd.argoproj.io]\n", "", 1)
	}
	repo.write(map[string]string{
		"apps/tree-a.yaml":    childApp("tree-a", repo.URL),
		"apps/tree-b.yaml":    noFinalizer(childApp("tree-b", repo.URL)),
		"apps/tree-c.yaml":    childApp("tree-c", repo.URL),
		"tree-a/cm.yaml":      configMap("a", "v1"),
		"tree-b/cm.yaml":      configMap("b", "v1"),
		"tree-c/tree-c1.yaml": childApp("tree-c1", repo.URL),
		"tree-c1/cm.yaml":     configMap("c1", "v1"),
	})
	sha := repo.commitAndPush("a tree of apps")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("tree", repo.URL, "apps", "tree", true, "3m")))
	for _, name := range []string{"tree-a", "tree-b", "tree-c1", "tree-c", "tree"} {
		waitApp(t, name, sha, 3*time.Minute)
	}
	ctx := context.Background()
	cm := func(region, namespace, name string) error {
		_, err := kubeClient(t, region).CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	}
	for _, r := range regions {
		for ns, name := range map[string]string{"tree-a": "a", "tree-b": "b", "tree-c1": "c1"} {
			require.NoError(t, cm(r, ns, name), "%s/%s in %s", ns, name, r)
		}
	}

	// The delete returns once the whole tree is gone.
	require.Contains(t, mustFerry(t, "app", "delete", "tree"), `application "tree" deleted`)
	c := temporalClient(t)
	for _, name := range []string{"tree", "tree-a", "tree-b", "tree-c", "tree-c1"} {
		d, err := c.DescribeWorkflowExecution(ctx, contract.WorkflowID(name), "")
		require.NoError(t, err)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, d.WorkflowExecutionInfo.GetStatus(), "app %s deleted", name)
	}
	for _, r := range regions {
		require.Error(t, cm(r, "tree-a", "a"), "tree-a's ConfigMap deleted with it (its finalizer) in %s", r)
		require.Error(t, cm(r, "tree-c1", "c1"), "tree-c1's ConfigMap deleted with it (its finalizer, through tree-c's) in %s", r)
		require.NoError(t, cm(r, "tree-b", "b"), "tree-b has no finalizer: its ConfigMap stays in %s", r)
		require.NoError(t, kubeClient(t, r).CoreV1().ConfigMaps("tree-b").Delete(ctx, "b", metav1.DeleteOptions{}))
	}
	recordHistories(t, "tree")
}
