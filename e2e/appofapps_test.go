package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/workflows"
)

// childApp is a child Application of the parent, kept in the parent's path:
// automated, with Argo CD's resources finalizer (cascading delete).
func childApp(name, repoURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\n  namespace: argocd\n", name)
	b.WriteString("  finalizers: [resources-finalizer.argocd.argoproj.io]\nspec:\n  project: default\n")
	fmt.Fprintf(&b, "  source:\n    repoURL: %s\n    targetRevision: main\n    path: %s\n  destinations:\n", repoURL, name)
	for _, r := range regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, name)
	}
	b.WriteString("  syncPolicy:\n    automated: {prune: true}\n    syncOptions: [CreateNamespace=true]\n")
	return b.String()
}

// TestAppOfApps: the Applications a parent renders run as apps; a new one
// from a push is synced, one removed from Git is deleted with its resources;
// the parent's health reflects its children.
func TestAppOfApps(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "platform")
	repo.write(map[string]string{
		"apps/child-a.yaml": childApp("child-a", repo.URL),
		"child-a/cm.yaml":   configMap("a", "v1"),
	})
	sha1 := repo.commitAndPush("child-a")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("platform", repo.URL, "apps", "platform", true, "3m")))
	waitApp(t, "child-a", sha1, 2*time.Minute)
	st := waitApp(t, "platform", sha1, time.Minute)
	require.True(t, hasChildRow(st, "child-a"), "the child is a resource of the parent: %+v", st.Resources)

	// A new child from a push: one refresh of the parent.
	repo.write(map[string]string{
		"apps/child-b.yaml": childApp("child-b", repo.URL),
		"child-b/cm.yaml":   configMap("b", "v1"),
	})
	sha2 := repo.commitAndPush("child-b")
	mustFerry(t, "app", "refresh", "platform")
	waitApp(t, "child-b", sha2, time.Minute)
	waitApp(t, "platform", sha2, time.Minute)

	// child-b gone from Git: pruned, cascading to its ConfigMap.
	repo.git("rm", "-q", "apps/child-b.yaml")
	sha3 := repo.commitAndPush("drop child-b")
	mustFerry(t, "app", "refresh", "platform")
	st = waitApp(t, "platform", sha3, time.Minute)
	require.False(t, hasChildRow(st, "child-b"))
	c := temporalClient(t)
	eventually(t, time.Minute, "child-b deleted", func() (bool, string) {
		d, err := c.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID("child-b"), "")
		if err != nil {
			return false, err.Error()
		}
		s := d.WorkflowExecutionInfo.GetStatus()
		return s == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, s.String()
	})
	for _, r := range regions {
		_, err := kubeClient(t, r).CoreV1().ConfigMaps("child-b").Get(context.Background(), "b", metav1.GetOptions{})
		require.Error(t, err, "child-b's ConfigMap deleted in %s", r)
		_, err = kubeClient(t, r).CoreV1().ConfigMaps("child-a").Get(context.Background(), "a", metav1.GetOptions{})
		require.NoError(t, err, "child-a untouched in %s", r)
	}
	mustFerry(t, "app", "delete", "platform")
	mustFerry(t, "app", "delete", "child-a", "--cascade")
}

func hasChildRow(st *app.Status, name string) bool {
	for _, r := range st.Resources {
		if r.Kind == app.Kind && r.Name == name {
			return r.Status == app.SyncStatusSynced
		}
	}
	return false
}
