//go:build argocd

package argocd

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

const corpus = "../../../shared/corpus/argocd-example-apps"

// exampleApps are the apps of Argo CD's example repository that run
// without a plugin or a chart repository from the internet, as Ferry's own
// e2e runs them (e2e/argocd_example_apps_test.go).
var exampleApps = []string{"guestbook", "helm-guestbook", "helm-hooks", "jsonnet-guestbook", "jsonnet-guestbook-tla",
	"kustomize-guestbook", "pre-post-sync", "sock-shop", "sync-waves"}

// exampleApplications renders the app-of-apps chart of the example
// repository (apps/) with helm, as Argo CD renders it, for the repository
// at repoURL, and returns its Applications of exampleApps.
func exampleApplications(t *testing.T, repoURL string) []*unstructured.Unstructured {
	t.Helper()
	out, err := exec.Command(filepath.Join(stack.ToolsBin, "helm"), "template", "apps", filepath.Join(corpus, "apps"),
		"--set", "config.spec.source.repoURL="+repoURL, "--set", "config.spec.source.targetRevision=main").CombinedOutput()
	require.NoError(t, err, "helm template: %s", out)
	var apps []*unstructured.Unstructured
	for _, doc := range strings.Split(string(out), "\n---") {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
		if u.GetKind() == "Application" && slices.Contains(exampleApps, strings.TrimPrefix(u.GetName(), "example.")) {
			apps = append(apps, u)
		}
	}
	require.Len(t, apps, len(exampleApps))
	return apps
}

// argoSyncsTheExampleApps: Argo CD itself, on this stack, syncs the nine
// example apps from the local Git server, as the example repository's
// app-of-apps chart writes their Applications: Synced at the pushed
// commit, Healthy or Progressing (the LoadBalancer Services have no load
// balancer here). It returns the repo.
func argoSyncsTheExampleApps(t *testing.T, e *e2etest.Env) *e2etest.Repo {
	repo := e.NewRepo(t, "argocd-example-apps")
	repo.CopyDir(corpus, ".")
	sha := repo.CommitAndPush("Argo CD's example apps")
	apps := argoClient(t).Resource(devenv.ArgoCDAppResource).Namespace(devenv.ArgoCDNamespace)
	for _, a := range exampleApplications(t, repo.URL) {
		_, err := apps.Apply(context.Background(), a.GetName(), a, metav1.ApplyOptions{FieldManager: "e2e", Force: true})
		require.NoError(t, err)
	}
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
	return repo
}
