package objects

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// childApp is a child Application in the parent's Git: Argo CD's guestbook
// to namespace %[2]s, synced automatically, with finalizers %[3]s.
const childApp = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %[1]s
  namespace: argocd
  finalizers: %[3]s
spec:
  project: default
  source:
    repoURL: %[4]s
    targetRevision: HEAD
    path: guestbook
  destination:
    server: https://kubernetes.default.svc
    namespace: %[2]s
  syncPolicy:
    automated: {}
    syncOptions: [CreateNamespace=true]
`

// TestAppOfAppsWritesItsChildrenAsObjects: with a control cluster, an app
// of apps writes its children as Application objects in its namespace,
// carrying its label; each becomes an app as any object does. A child
// removed from Git is pruned by deleting its object, and its resources
// finalizer cascades as without a control cluster.
func TestAppOfAppsWritesItsChildrenAsObjects(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	repo := e.NewRepo(t, "app-of-apps-objects")
	repo.CopyDir(corpus+"/guestbook", "guestbook")
	repo.Write(map[string]string{
		"apps/child-1.yaml": fmt.Sprintf(childApp, "aoa-child-1", "aoa-1", "[]", repo.URL),
		"apps/child-2.yaml": fmt.Sprintf(childApp, "aoa-child-2", "aoa-2", "[resources-finalizer.argocd.argoproj.io]", repo.URL),
	})
	sha := repo.CommitAndPush("two children")
	parent := strings.NewReplacer("name: guestbook\n", "name: aoa-parent\n", "path: guestbook\n", "path: apps\n", "namespace: default\n", "namespace: argocd\n").
		Replace(fmt.Sprintf(guestbook, repo.URL)) + "  syncPolicy:\n    automated: {prune: true}\n"
	mustKubectl(t, parent, "apply", "-f", "-")

	for _, child := range []string{"aoa-child-1", "aoa-child-2"} {
		o := waitObject(t, child, 3*time.Minute, "written by the parent, Synced and Healthy at "+e2etest.Short(sha), func(o object) bool {
			return o.Status.Sync.Status == "Synced" && o.Status.Health.Status == "Healthy" && o.Status.Sync.Revision == sha
		})
		require.Equal(t, "aoa-parent", o.Metadata.Labels["ferry.dev/app"], "%s carries its parent's label", child)
	}
	require.Contains(t, mustKubectl(t, "", "get", "applications", "-l", "ferry.dev/app=aoa-parent", "-o", "name"), "aoa-child-2")
	waitObject(t, "aoa-parent", 2*time.Minute, "Synced and Healthy", func(o object) bool {
		return o.Status.Sync.Status == "Synced" && o.Status.Health.Status == "Healthy"
	})
	v, err := e2etest.Query(e.TemporalClient(t), "aoa-child-1")
	require.NoError(t, err)
	require.Equal(t, "argocd/aoa-child-1", v.Owner.Object, "the child's app is its object's")
	kube := e.KubeClient(t, "us-east-1")
	_, err = kube.AppsV1().Deployments("aoa-2").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
	require.NoError(t, err)

	// Gone from Git: the parent prunes the object, and the child's
	// finalizer takes its resources with it.
	repo.Git("rm", "-q", "apps/child-2.yaml")
	next := repo.CommitAndPush("one child")
	mustKubectl(t, "", "annotate", "application", "aoa-parent", "argocd.argoproj.io/refresh=normal")
	e2etest.Eventually(t, 3*time.Minute, "aoa-child-2's object pruned", func() (bool, string) {
		_, ok, state := getObject(t, "aoa-child-2")
		return !ok, state
	})
	_, err = kube.AppsV1().Deployments("aoa-2").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the pruned child's finalizer cascaded: %v", err)
	waitObject(t, "aoa-parent", 2*time.Minute, "Synced at "+e2etest.Short(next), func(o object) bool {
		return o.Status.Sync.Status == "Synced" && o.Status.Sync.Revision == next
	})
	_, ok, state := getObject(t, "aoa-child-1")
	require.True(t, ok, "the child still in Git stays: %s", state)
	e.RecordHistories(t, "app/aoa-parent", "object-aoa-parent")
}
