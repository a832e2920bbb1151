//go:build argocd

package argocd

import (
	"fmt"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

const corpus = "../../../shared/corpus/argocd-example-apps"

// exampleApps are the apps of Argo CD's example repository that run
// without a plugin or a chart repository from the internet, as Ferry's own
// e2e runs them (e2e/argocd_example_apps_test.go).
var exampleApps = []string{"guestbook", "helm-guestbook", "helm-hooks", "jsonnet-guestbook", "jsonnet-guestbook-tla",
	"kustomize-guestbook", "pre-post-sync", "sock-shop", "sync-waves"}

// TestArgoCDSyncsTheExampleApps: Argo CD itself, on this stack, runs the
// app-of-apps chart of its example repository from the local Git server,
// and syncs its nine example apps: Synced at the pushed commit, Healthy
// or Progressing (the LoadBalancer Services have no load balancer here).
func TestArgoCDSyncsTheExampleApps(t *testing.T) {
	e := newEnv(t)
	repo := e.NewRepo(t, "argocd-example-apps")
	repo.CopyDir(corpus, ".")
	sha := repo.CommitAndPush("Argo CD's example apps")
	applyArgoApp(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: example-apps
  namespace: argocd
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
`, repo.URL, repo.URL))
	for _, name := range exampleApps {
		e2etest.Eventually(t, 6*time.Minute, "Argo CD: example."+name+" Synced", func() (bool, string) {
			a, err := getArgoApp(t, "example."+name)
			if err != nil {
				return false, err.Error()
			}
			ok := a.Sync == "Synced" && a.Revision == sha && (a.Health == "Healthy" || a.Health == "Progressing")
			return ok, a.String()
		})
	}
}
