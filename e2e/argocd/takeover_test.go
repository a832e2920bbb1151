//go:build argocd

package argocd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// TestTakeoverOfTheExampleApps: Argo CD syncs its nine example apps; ferry
// import brings them over in shadow, with their project and its cluster
// Secrets as regions (a cluster Ferry cannot carry is named first, and a
// dry run refuses); the report shows Ferry's compare agrees with Argo
// CD's; the takeover of all nine keeps every object (UIDs), makes no new
// ReplicaSet and restarts no Pod; Argo CD's Applications are gone, nothing
// they managed was deleted; and a field deleted from Git after the
// switch goes from the cluster (the field managers were handed over).
func TestTakeoverOfTheExampleApps(t *testing.T) {
	e := newEnv(t)
	repo := argoSyncsTheExampleApps(t, e)
	home := kubeClient(t, argoCD.Home)
	before := workloads(t, home)
	require.NotEmpty(t, before)

	// A cluster Ferry cannot carry: named, and a dry run exits non-zero.
	eks := argoClusterSecret("cluster-eks", `{"awsAuthConfig":{"clusterName":"prod"},"tlsClientConfig":{"caData":"AA=="}}`)
	_, err := home.CoreV1().Secrets(devenv.ArgoCDNamespace).Create(context.Background(), eks, metav1.CreateOptions{})
	require.NoError(t, err)
	out, err := e.Ferry(t, "import", "--from-context", argoCD.Home, "--dry-run")
	require.Error(t, err, out)
	assert.Contains(t, out, "Secret argocd/cluster-eks: data.config.awsAuthConfig: AWS IAM authentication is not carried")
	require.NoError(t, home.CoreV1().Secrets(devenv.ArgoCDNamespace).Delete(context.Background(), "cluster-eks", metav1.DeleteOptions{}))
	out = e.MustFerry(t, "import", "--from-context", argoCD.Home, "--dry-run")
	assert.Contains(t, out, "Everything can be carried")

	// The import, and a worker on the regions it wrote.
	dir := t.TempDir()
	out = e.MustFerry(t, "import", "--from-context", argoCD.Home, "--out", dir)
	assert.Contains(t, out, "(9 apps, in shadow)")
	regionsFile := filepath.Join(dir, "regions.yaml")
	regionsYAML, err := os.ReadFile(regionsFile)
	require.NoError(t, err)
	assert.Contains(t, string(regionsYAML), "inCluster: true")
	for _, r := range regions { // the imported kubeconfig reaches every region
		rc, err := kube.LoadConfig(filepath.Join(dir, "kubeconfig"), r)
		require.NoError(t, err)
		_, err = kubernetes.NewForConfigOrDie(rc).CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
		require.NoError(t, err, "region %s through the imported kubeconfig", r)
	}
	e.StartWorker(t, append(e.AllRoles(), "--regions-config", regionsFile)...)

	// In shadow: compared, never written.
	e2etest.Eventually(t, 4*time.Minute, "the report shows no difference", func() (bool, string) {
		out, err := e.Ferry(t, "import", "report", "--from-context", argoCD.Home)
		return err == nil, out
	})
	for _, o := range allObjects(t, home) {
		assert.Empty(t, o.GetLabels()[kube.LabelApp], "%s/%s written in shadow", o.Kind, o.GetName())
	}

	names := make([]string, len(exampleApps))
	for i, n := range exampleApps {
		names[i] = "example." + n
	}
	e.MustFerry(t, append([]string{"app", "takeover", "--from-context", argoCD.Home}, names...)...)
	for _, name := range names {
		_, err := argoClient(t).Resource(devenv.ArgoCDAppResource).Namespace(devenv.ArgoCDNamespace).Get(context.Background(), name, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "Argo CD's Application %s is gone: %v", name, err)
		e2etest.Eventually(t, 3*time.Minute, name+" synced by Ferry", func() (bool, string) {
			s := ferryStatus(t, name)
			return s.Sync == "Synced" && s.Operation == "Succeeded", s.String()
		})
	}
	for _, o := range allObjects(t, home) {
		if o.GetAnnotations()["helm.sh/hook"] == "" && o.GetAnnotations()["argocd.argoproj.io/hook"] == "" {
			assert.NotEmpty(t, o.GetLabels()[kube.LabelApp], "%s %s/%s is Ferry's", o.Kind, o.GetNamespace(), o.GetName())
			assert.Empty(t, o.GetAnnotations()["argocd.argoproj.io/tracking-id"], "Argo CD's tracking of %s/%s is gone", o.Kind, o.GetName())
		}
	}
	assert.Equal(t, before, workloads(t, home), "the same Deployments, ReplicaSets, Pods (and their restarts) and Services")

	// The field managers were handed over: a field deleted from Git goes.
	deployment := filepath.Join(repo.Dir, "guestbook", "guestbook-ui-deployment.yaml")
	data, err := os.ReadFile(deployment)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(deployment, []byte(strings.Replace(string(data), "  revisionHistoryLimit: 3\n", "", 1)), 0o644))
	repo.CommitAndPush("guestbook: Kubernetes' default revisionHistoryLimit")
	e.MustFerry(t, "app", "refresh", "example.guestbook")
	e2etest.Eventually(t, 2*time.Minute, "revisionHistoryLimit back to the default", func() (bool, string) {
		d, err := home.AppsV1().Deployments("guestbook").Get(context.Background(), "guestbook-ui", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return *d.Spec.RevisionHistoryLimit == 10, fmt.Sprintf("revisionHistoryLimit %d", *d.Spec.RevisionHistoryLimit)
	})
}

// workloads names every Deployment, ReplicaSet, Service and Pod of a
// ReplicaSet of the namespaces (the example apps' when none is given) by
// its UID, with a Pod's restarts: what a takeover must leave as it is.
func workloads(t *testing.T, c kubernetes.Interface, namespaces ...string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	if len(namespaces) == 0 {
		namespaces = exampleApps
	}
	for _, ns := range namespaces {
		ds, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, d := range ds.Items {
			out["Deployment "+ns+"/"+d.Name] = string(d.UID)
		}
		rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, rs := range rss.Items {
			out["ReplicaSet "+ns+"/"+rs.Name] = string(rs.UID)
		}
		svcs, err := c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, s := range svcs.Items {
			out["Service "+ns+"/"+s.Name] = string(s.UID)
		}
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, p := range pods.Items {
			if owner := metav1.GetControllerOf(&p); owner == nil || owner.Kind != "ReplicaSet" {
				continue // a hook's
			}
			restarts := 0
			for _, cs := range p.Status.ContainerStatuses {
				restarts += int(cs.RestartCount)
			}
			out["Pod "+ns+"/"+p.Name] = fmt.Sprintf("%s restarts %d", p.UID, restarts)
		}
	}
	return out
}

// allObjects are the Deployments and Services of the namespaces (the
// example apps' when none is given).
func allObjects(t *testing.T, c kubernetes.Interface, namespaces ...string) []kindObject {
	t.Helper()
	ctx := context.Background()
	var out []kindObject
	if len(namespaces) == 0 {
		namespaces = exampleApps
	}
	for _, ns := range namespaces {
		ds, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for i := range ds.Items {
			out = append(out, kindObject{"Deployment", &ds.Items[i]})
		}
		svcs, err := c.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for i := range svcs.Items {
			out = append(out, kindObject{"Service", &svcs.Items[i]})
		}
	}
	return out
}

type kindObject struct {
	Kind string
	metav1.Object
}

func argoClusterSecret(name, config string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		StringData: map[string]string{"name": "eks", "server": "https://eks.example.com", "config": config}}
}

func kubeClient(t *testing.T, context string) kubernetes.Interface {
	t.Helper()
	rc, err := stack.RestConfig(context)
	require.NoError(t, err)
	return kubernetes.NewForConfigOrDie(rc)
}

// ferryStatus is an app's status as Ferry writes it to its object.
func ferryStatus(t *testing.T, name string) argoApp {
	t.Helper()
	rc, err := stack.RestConfig(stack.ControlContext)
	require.NoError(t, err)
	u, err := dynamic.NewForConfigOrDie(rc).Resource(devenv.ArgoCDAppResource).Namespace(stack.ControlNamespace).
		Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return argoApp{Sync: err.Error()}
	}
	return statusOf(u)
}

func statusOf(u *unstructured.Unstructured) argoApp {
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(u.Object, path...); return s }
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	return argoApp{Sync: str("status", "sync", "status"), Health: str("status", "health", "status"),
		Revision: str("status", "sync", "revision"), Operation: str("status", "operationState", "phase"), Conditions: conds}
}
