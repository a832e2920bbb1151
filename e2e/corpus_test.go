package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestCorpusApps syncs Argo CD's own example apps, unchanged, to every
// region, and checks what Argo CD would have made of them.
func TestCorpusApps(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "examples")
	for _, dir := range []string{"kustomize-guestbook", "helm-guestbook", "sock-shop", "jsonnet-guestbook", "jsonnet-guestbook-tla"} {
		repo.copyDir(filepath.Join(corpus, dir), dir)
	}
	sha := repo.commitAndPush("Argo CD's example apps")
	c := temporalClient(t)

	synced := func(name string) {
		t.Helper()
		eventually(t, 3*time.Minute, name+" Synced in every region", func() (bool, string) {
			v, err := queryView(t, c, name)
			if err != nil {
				return false, err.Error()
			}
			ok := v.Status.Sync.Status == app.SyncStatusSynced && v.Status.Sync.Revision == sha
			return ok, fmt.Sprintf("%s/%s %+v %+v", v.Status.Sync.Status, v.Status.Health.Status, v.Status.Conditions, v.Status.OperationState)
		})
	}

	t.Run("kustomize-guestbook", func(t *testing.T) {
		mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("kustomize-guestbook", repo.URL, "kustomize-guestbook", "kgb", true, "3m")))
		waitApp(t, "kustomize-guestbook", sha, 3*time.Minute)
		for _, r := range regions {
			_, err := kubeClient(t, r).AppsV1().Deployments("kgb").Get(context.Background(), "kustomize-guestbook-ui", metav1.GetOptions{})
			require.NoError(t, err, "namePrefix applied in %s", r)
		}
	})

	t.Run("helm-guestbook with values-production.yaml", func(t *testing.T) {
		spec := strings.Replace(appYAML("helm-guestbook", repo.URL, "helm-guestbook", "hgb", true, "3m"),
			"    path: helm-guestbook\n", "    path: helm-guestbook\n    helm:\n      valueFiles: [values-production.yaml]\n", 1)
		mustFerry(t, "app", "apply", "-f", writeFile(t, spec))
		synced("helm-guestbook")
		for _, r := range regions {
			svc, err := kubeClient(t, r).CoreV1().Services("hgb").Get(context.Background(), "helm-guestbook", metav1.GetOptions{})
			require.NoError(t, err, "release name is the app's name in %s", r)
			require.Equal(t, corev1.ServiceTypeLoadBalancer, svc.Spec.Type, "values-production.yaml applied in %s", r)
		}
	})

	t.Run("sock-shop", func(t *testing.T) {
		mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("sock-shop", repo.URL, "sock-shop", "sock-shop", true, "3m")))
		synced("sock-shop")
		for _, r := range regions {
			deps, err := kubeClient(t, r).AppsV1().Deployments("sock-shop").List(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
			require.Len(t, deps.Items, 14, "the 14 Deployments of sock-shop in %s", r)
			eventually(t, time.Minute, "sock-shop available in "+r, func() (bool, string) {
				deps, err := kubeClient(t, r).AppsV1().Deployments("sock-shop").List(context.Background(), metav1.ListOptions{})
				if err != nil {
					return false, err.Error()
				}
				for _, d := range deps.Items {
					if d.Status.AvailableReplicas < *d.Spec.Replicas {
						return false, d.Name + " not available"
					}
				}
				return true, ""
			})
		}
	})

	t.Run("jsonnet-guestbook", func(t *testing.T) {
		mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("jsonnet-guestbook", repo.URL, "jsonnet-guestbook", "jgb", true, "3m")))
		synced("jsonnet-guestbook")
		for _, r := range regions {
			svc, err := kubeClient(t, r).CoreV1().Services("jgb").Get(context.Background(), "jsonnet-guestbook-ui", metav1.GetOptions{})
			require.NoError(t, err, "params.libsonnet imported in %s", r)
			require.Equal(t, corev1.ServiceTypeLoadBalancer, svc.Spec.Type, r)
		}
	})

	t.Run("jsonnet-guestbook-tla with tlas", func(t *testing.T) {
		spec := strings.Replace(appYAML("jsonnet-tla", repo.URL, "jsonnet-guestbook-tla", "jtla", true, "3m"),
			"    path: jsonnet-guestbook-tla\n", `    path: jsonnet-guestbook-tla
    directory:
      jsonnet:
        tlas:
          - {name: name, value: $ARGOCD_APP_NAME-ui}
          - {name: replicas, value: "1 + 1", code: true}
`, 1)
		mustFerry(t, "app", "apply", "-f", writeFile(t, spec))
		synced("jsonnet-tla")
		for _, r := range regions {
			d, err := kubeClient(t, r).AppsV1().Deployments("jtla").Get(context.Background(), "jsonnet-tla-ui", metav1.GetOptions{})
			require.NoError(t, err, "the name TLA, with the app's name, in %s", r)
			require.Equal(t, int32(2), *d.Spec.Replicas, "the replicas TLA as code in %s", r)
		}
	})

	for _, name := range []string{"kustomize-guestbook", "helm-guestbook", "sock-shop", "jsonnet-guestbook", "jsonnet-tla"} {
		mustFerry(t, "app", "delete", name, "--cascade")
	}
}
