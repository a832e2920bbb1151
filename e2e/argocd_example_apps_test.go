package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestArgoCDExampleAppsChart runs the app-of-apps chart of Argo CD's
// example repository (apps/) as it is written: its 14 Applications, with
// destination.server https://kubernetes.default.svc, metadata.namespace
// argocd and Argo CD's resources finalizer, are accepted and run as apps
// in the in-cluster region. The parent only sets the chart's values for
// the repository (the local Git server instead of GitHub), with Helm
// parameters as an Argo CD user would. The examples whose directories the
// corpus holds and whose features Ferry has sync; those
// that are missing (blue-green, helm-dependency, plugins/kasane, plugins/nix)
// or need a plugin the worker is not given run as apps whose status names
// the problem.
func TestArgoCDExampleAppsChart(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	repo := newRepo(t, "argocd-example-apps")
	repo.copyDir(corpus, ".")
	sha := repo.commitAndPush("Argo CD's example apps")
	parent := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: example-apps
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: default
  source:
    repoURL: %s
    targetRevision: main
    path: apps
    helm:
      parameters:
        - {name: config.spec.source.repoURL, value: %q}
        - {name: config.spec.source.targetRevision, value: main}
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
  syncPolicy:
    automated: {prune: true}
`, repo.URL, repo.URL)
	mustFerry(t, "app", "apply", "-f", writeFile(t, parent))

	syncing := []string{"guestbook", "helm-guestbook", "helm-hooks", "jsonnet-guestbook", "jsonnet-guestbook-tla",
		"kustomize-guestbook", "pre-post-sync", "sock-shop", "sync-waves"}
	failing := []string{"blue-green", "helm-dependency", "plugin-kasane", "plugin-kustomized-helm", "plugin-nix"}
	for _, n := range syncing {
		name := "example." + n
		eventually(t, 6*time.Minute, name+" Synced in the in-cluster region", func() (bool, string) {
			v, err := queryView(t, c, name)
			if err != nil {
				return false, err.Error()
			}
			s := v.Status
			// Synced; Healthy, or Progressing for the LoadBalancer Services of
			// helm-guestbook and the jsonnet guestbooks (no load balancer here,
			// as in Argo CD).
			ok := s.Sync.Status == app.SyncStatusSynced && s.Sync.Revision == sha &&
				(s.Health.Status == app.HealthHealthy || s.Health.Status == app.HealthProgressing) &&
				len(s.Regions) == 1 && s.Regions["us-east-1"].Sync == app.SyncStatusSynced
			return ok, fmt.Sprintf("%s/%s at %s, regions %+v, conditions %+v, operation %+v",
				s.Sync.Status, s.Health.Status, short(s.Sync.Revision), s.Regions, s.Conditions, s.OperationState)
		})
	}
	for _, n := range failing {
		name := "example." + n
		eventually(t, 3*time.Minute, name+" runs and names its problem", func() (bool, string) {
			v, err := queryView(t, c, name)
			if err != nil {
				return false, err.Error()
			}
			return len(v.Status.Conditions) > 0 && v.Status.Sync.Status != app.SyncStatusSynced,
				fmt.Sprintf("%s, conditions %+v", v.Status.Sync.Status, v.Status.Conditions)
		})
	}
	eventually(t, 2*time.Minute, "the parent is Synced with its 14 children", func() (bool, string) {
		v, err := queryView(t, c, "example-apps")
		if err != nil {
			return false, err.Error()
		}
		children := 0
		for _, r := range v.Status.Resources {
			if r.Kind == app.Kind && r.Status == app.SyncStatusSynced {
				children++
			}
		}
		return v.Status.Sync.Status == app.SyncStatusSynced && children == 14,
			fmt.Sprintf("%s, %d children Synced, conditions %+v", v.Status.Sync.Status, children, v.Status.Conditions)
	})

	mustFerry(t, "app", "delete", "example-apps", "--cascade=false")
	for _, n := range append(syncing, failing...) {
		mustFerry(t, "app", "delete", "example."+n)
	}
}
