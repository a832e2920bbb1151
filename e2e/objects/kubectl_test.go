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

const corpus = "../../../shared/corpus/argocd-example-apps"

// guestbook is the Application of Argo CD's getting started guide, as it
// is written there, with only repoURL rewritten to the local Git server.
const guestbook = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
  namespace: argocd
spec:
  project: default
  source:
    repoURL: %s
    targetRevision: HEAD
    path: guestbook
  destination:
    server: https://kubernetes.default.svc
    namespace: default
`

// TestKubectlRunsAnArgoCDApplication drives an app with kubectl alone, as
// an Argo CD user does: apply the Application, see its columns, sync it by
// its operation field, refresh it by annotation, and delete it with Argo
// CD's resources finalizer.
func TestKubectlRunsAnArgoCDApplication(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	repo := e.NewRepo(t, "guestbook-objects")
	repo.CopyDir(corpus+"/guestbook", "guestbook")
	sha := repo.CommitAndPush("guestbook")

	mustKubectl(t, fmt.Sprintf(guestbook, repo.URL), "apply", "-f", "-")
	// No automated sync: the app compares and waits, as in Argo CD.
	waitObject(t, "guestbook", 3*time.Minute, "OutOfSync and Missing at "+e2etest.Short(sha), func(o object) bool {
		return o.Status.Sync.Status == "OutOfSync" && o.Status.Health.Status == "Missing" && o.Status.Sync.Revision == sha
	})
	out := mustKubectl(t, "", "get", "applications")
	require.Regexp(t, `NAME\s+SYNC STATUS\s+HEALTH STATUS`, out)
	require.Regexp(t, `guestbook\s+OutOfSync\s+Missing`, out)

	// Argo CD's way to sync: the operation field. It is cleared once taken.
	mustKubectl(t, "", "patch", "application", "guestbook", "--type", "merge", "-p", `{"operation":{"initiatedBy":{"username":"e2e"},"sync":{"prune":true}}}`)
	mustKubectl(t, "", "wait", "--for=jsonpath={.status.sync.status}=Synced", "--timeout=3m", "application/guestbook")
	o := waitObject(t, "guestbook", 3*time.Minute, "Healthy, its operation cleared and Succeeded", func(o object) bool {
		return o.Status.Health.Status == "Healthy" && len(o.Operation) == 0 &&
			o.Status.OperationState != nil && o.Status.OperationState.Phase == "Succeeded"
	})
	require.NotEmpty(t, o.Status.Resources, "the object lists the app's resources")
	require.Equal(t, "Directory", o.Status.SourceType)
	require.Equal(t, []string{"gcr.io/google-samples/gb-frontend:v5"}, o.Status.Summary.Images)
	kube := e.KubeClient(t, "us-east-1")
	ctx := context.Background()
	_, err := kube.AppsV1().Deployments("default").Get(ctx, "guestbook-ui", metav1.GetOptions{})
	require.NoError(t, err, "the sync created the Deployment")

	// A new commit, seen at once through the refresh annotation (the
	// poll is minutes away); the annotation is removed.
	repo.Write(map[string]string{"guestbook/guestbook-ui-svc.yaml": strings.Replace(readCorpus(t, "guestbook/guestbook-ui-svc.yaml"), "port: 80", "port: 8080", 1)})
	next := repo.CommitAndPush("port 8080")
	mustKubectl(t, "", "annotate", "application", "guestbook", "argocd.argoproj.io/refresh=normal")
	waitObject(t, "guestbook", time.Minute, "OutOfSync at "+e2etest.Short(next)+", the refresh annotation removed", func(o object) bool {
		_, annotated := o.Metadata.Annotations["argocd.argoproj.io/refresh"]
		return o.Status.Sync.Status == "OutOfSync" && o.Status.Sync.Revision == next && !annotated
	})
	mustKubectl(t, "", "patch", "application", "guestbook", "--type", "merge", "-p", `{"operation":{"sync":{"revision":"`+next+`"}}}`)
	waitObject(t, "guestbook", 3*time.Minute, "Synced at "+e2etest.Short(next), func(o object) bool {
		return o.Status.Sync.Status == "Synced" && o.Status.Sync.Revision == next && len(o.Operation) == 0
	})

	// Deleting with the resources finalizer: the object stays until the
	// app's resources are gone.
	mustKubectl(t, "", "patch", "application", "guestbook", "--type", "merge", "-p", `{"metadata":{"finalizers":["resources-finalizer.argocd.argoproj.io"]}}`)
	mustKubectl(t, "", "delete", "application", "guestbook", "--wait=false")
	e2etest.Eventually(t, 3*time.Minute, "the Application object gone", func() (bool, string) {
		_, ok, state := getObject(t, "guestbook")
		return !ok, state
	})
	_, err = kube.AppsV1().Deployments("default").Get(ctx, "guestbook-ui", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "the Deployment is deleted before the object goes: %v", err)
	_, err = e2etest.Query(e.TemporalClient(t), "guestbook")
	require.ErrorContains(t, err, "not found")
	e.RecordHistories(t, "app/guestbook", "object-guestbook")
}

// TestDeletingAnObjectWithoutTheFinalizerKeepsItsResources: the app goes
// with its object, and what it deployed stays, as in Argo CD.
func TestDeletingAnObjectWithoutTheFinalizerKeepsItsResources(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	repo := e.NewRepo(t, "guestbook-kept")
	repo.CopyDir(corpus+"/guestbook", "guestbook")
	repo.CommitAndPush("guestbook")
	manifest := strings.NewReplacer("name: guestbook\n", "name: kept\n", "namespace: default\n", "namespace: kept\n").
		Replace(fmt.Sprintf(guestbook, repo.URL)) + "  syncPolicy:\n    automated: {}\n    syncOptions: [CreateNamespace=true]\n"
	mustKubectl(t, manifest, "apply", "-f", "-")
	mustKubectl(t, "", "wait", "--for=jsonpath={.status.health.status}=Healthy", "--timeout=3m", "application/kept")

	mustKubectl(t, "", "delete", "application", "kept")
	c := e.TemporalClient(t)
	e2etest.Eventually(t, time.Minute, "app kept deleted", func() (bool, string) {
		_, err := e2etest.Query(c, "kept")
		return err != nil && strings.Contains(err.Error(), "not found"), fmt.Sprint(err)
	})
	_, err := e.KubeClient(t, "us-east-1").AppsV1().Deployments("kept").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
	require.NoError(t, err, "the Deployment stays")
}
