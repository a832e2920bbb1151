package objects

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/scm/scmtest"
)

const scmToken = "e2e-scm-t0k3n-never-shown"

// previewSet is an ApplicationSet with a pull request generator against
// the GitHub API at api, its token in Secret scm-token.
const previewSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: previews
  namespace: argocd
spec:
  generators:
  - pullRequest:
      github:
        owner: acme
        repo: shop
        api: %[1]s
        tokenRef: {secretName: scm-token, key: token}
        labels: [preview]
      requeueAfterSeconds: 3600
  template:
    metadata:
      name: 'shop-pr-{{number}}'
    spec:
      project: default
      source: {repoURL: %[2]s, targetRevision: '{{head_sha}}', path: app}
      destination: {name: us-east-1, namespace: 'shop-pr-{{number}}'}
      syncPolicy:
        automated: {prune: true}
        syncOptions: [CreateNamespace=true]
`

// TestPullRequestGeneratorPreviewApps: a pull request generator against
// the SCM stand-in (GitHub's API, the token from an scm-creds Secret of
// the control namespace) creates an app per open pull request carrying
// its label, each synced at the pull request's head; closing one and
// refreshing the set deletes its app; the provider answering 500 leaves
// the apps as they are and the set's ErrorOccurred condition says why.
// The token appears in no history, status or log.
func TestPullRequestGeneratorPreviewApps(t *testing.T) {
	newEnv(t)
	e := &e2etest.Env{Stack: stack, Regions: []string{"us-east-1"}}
	repo := e.NewRepo(t, "previews")
	repo.Write(map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: preview}\ndata: {v: one}\n"})
	sha := repo.CommitAndPush("one")

	scm := scmtest.New(scmToken)
	t.Cleanup(scm.Close)
	scm.AddRepo(scmtest.Repo{Owner: "acme", Name: "shop", DefaultBranch: "main", Branches: map[string]string{"main": sha}})
	for _, n := range []int64{1, 2, 3} {
		labels := []string{"preview"}
		if n == 3 {
			labels = nil // not a preview: no app
		}
		scm.AddPull("acme/shop", scmtest.Pull{Number: n, Title: fmt.Sprintf("change %d", n), Branch: fmt.Sprintf("feature-%d", n),
			Target: "main", SHA: sha, Author: "ann", Labels: labels})
	}
	scm.PageSize(2)
	u, err := url.Parse(scm.URL)
	require.NoError(t, err)
	w := e.StartWorker(t, "--control", "--region", "us-east-1", "--render-allow-hosts", stack.RenderAllowHosts()+","+u.Host)

	mustKubectl(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata:
  name: scm-token
  namespace: argocd
  labels: {argocd.argoproj.io/secret-type: scm-creds}
stringData: {token: %s}
`, scmToken), "apply", "-f", "-")
	t.Cleanup(func() { _, _ = kubectl(t, "", "delete", "secret", "scm-token", "--ignore-not-found") })
	mustKubectl(t, fmt.Sprintf(previewSet, scm.URL, repo.URL), "apply", "-f", "-")
	t.Cleanup(func() {
		_, _ = kubectl(t, "", "delete", "applicationset", "previews", "--ignore-not-found", "--timeout=90s")
	})

	c := e.TemporalClient(t)
	for _, name := range []string{"shop-pr-1", "shop-pr-2"} {
		e2etest.Eventually(t, 3*time.Minute, name+" Synced and Healthy at the pull request's head", func() (bool, string) {
			v, err := e2etest.Query(c, name)
			if err != nil {
				return false, err.Error()
			}
			return v.Status.Sync.Status == app.SyncStatusSynced && v.Status.Health.Status == app.HealthHealthy && v.Status.Sync.Revision == sha,
				fmt.Sprint(v.Status.Sync, v.Status.Health)
		})
	}
	_, err = e2etest.Query(c, "shop-pr-3")
	require.Error(t, err, "pull request 3 has no preview label: no app")
	_, err = e.KubeClient(t, "us-east-1").CoreV1().ConfigMaps("shop-pr-1").Get(context.Background(), "preview", metav1.GetOptions{})
	require.NoError(t, err, "the preview's ConfigMap in its namespace")
	for _, r := range scm.Requests() {
		require.Equal(t, "Bearer "+scmToken, r.Authorization, "the token sent as GitHub expects, on %s", r.Path)
	}

	// Pull request 2 closes: a refresh deletes its app (the set polls only hourly).
	scm.ClosePull("acme/shop", 2)
	e.MustFerry(t, "appset", "refresh", "previews")
	e2etest.Eventually(t, 2*time.Minute, "shop-pr-2 deleted once its pull request closed", func() (bool, string) {
		_, err := e2etest.Query(c, "shop-pr-2")
		return err != nil && strings.Contains(err.Error(), "not found"), fmt.Sprint(err)
	})
	_, err = e2etest.Query(c, "shop-pr-1")
	require.NoError(t, err, "the open pull request keeps its app")

	// The provider fails: the apps stay, and the set says why.
	scm.Fail(500)
	e.MustFerry(t, "appset", "refresh", "previews")
	var set *contract.AppSetView
	e2etest.Eventually(t, 2*time.Minute, "the set's ErrorOccurred condition names the 500", func() (bool, string) {
		set, err = ferryclient.GetAppSet(context.Background(), c, "previews")
		if err != nil {
			return false, err.Error()
		}
		for _, cond := range set.Status.Conditions {
			if cond.Type == contract.AppSetErrorOccurred {
				return cond.Status == "True" && strings.Contains(cond.Message, "/api/v3/repos/acme/shop/pulls: 500 Internal Server Error"), fmt.Sprint(cond)
			}
		}
		return false, fmt.Sprint(set.Status.Conditions)
	})
	v, err := e2etest.Query(c, "shop-pr-1")
	require.NoError(t, err, "the apps are kept while the provider fails")
	require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status)
	// JSON: YAML would fold the long message across lines.
	out := e.MustFerry(t, "appset", "get", "previews", "-o", "json")
	require.Contains(t, out, "shop-pr-1")
	require.Contains(t, out, "500 Internal Server Error")

	// The token is in no status, history or log.
	require.NotContains(t, out, scmToken)
	for _, id := range []string{contract.AppSetWorkflowID("previews"), "app/shop-pr-1"} {
		for run, h := range e2etest.WorkflowHistories(t, c, id) {
			require.NotContains(t, string(h), scmToken, "history %s run %s", id, run)
		}
	}
	log, err := os.ReadFile(w.Log)
	require.NoError(t, err)
	require.NotContains(t, string(log), scmToken, "worker log")
	e.RecordHistories(t, contract.AppSetWorkflowID("previews"), "appset-pullrequest")
}
