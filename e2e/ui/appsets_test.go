package ui

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// fleetSet is an ApplicationSet of project fleet: one app per element of
// its list, from the repo %s.
const fleetSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fleet, namespace: argocd}
spec:
  generators:
  - list:
      elements:
      - {name: fleet-one}
  template:
    metadata: {name: '{{name}}'}
    spec:
      project: fleet
      source: {repoURL: %s, targetRevision: HEAD, path: app}
      destination: {server: https://kubernetes.default.svc, namespace: fleet}
      syncPolicy: {automated: {}, syncOptions: [CreateNamespace=true]}
`

// TestWebUIApplicationSets: the ApplicationSets page shows a set with its
// generator and the app it generated, linked to the app's page; the REST
// API shows the set to whom the policy allows applicationsets, get on
// fleet/fleet, and to nobody else.
func TestWebUIApplicationSets(t *testing.T) {
	e := newEnv(t)
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  accounts.outsider: login
`, "apply", "-f", "-")
	kubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-rbac-cm, namespace: argocd}\ndata: {}\n", "apply", "-f", "-")
	e.StartWorker(t, e.AllRoles()...)
	s := e.StartServer(t)
	admin := s.Login(t, "admin", adminPassword(t))
	repo := e.NewRepo(t, "ui-fleet")
	repo.Write(map[string]string{"app/web.yaml": web(1)})
	repo.CommitAndPush("the fleet")
	kubectl(t, e2etest.Project("fleet", ""), "apply", "-f", "-")
	kubectl(t, fmt.Sprintf(fleetSet, repo.URL), "apply", "-f", "-")
	e2etest.Eventually(t, 3*time.Minute, "the set shows its app", func() (bool, string) {
		var set struct {
			Status struct{ Resources []struct{ Name string } }
		}
		status, body := s.Do(t, admin, "GET", "/api/v1/applicationsets/fleet", nil)
		if status != http.StatusOK {
			return false, body
		}
		require.NoError(t, jsonDecode(body, &set))
		return len(set.Status.Resources) == 1 && set.Status.Resources[0].Name == "fleet-one", body
	})
	s.MustDo(t, admin, "PUT", "/api/v1/account/password",
		map[string]string{"name": "outsider", "currentPassword": adminPassword(t), "newPassword": "outsider-password"}, http.StatusOK, nil)
	outsider := s.Login(t, "outsider", "outsider-password")
	var list struct{ Items []any }
	s.MustDo(t, outsider, "GET", "/api/v1/applicationsets", nil, http.StatusOK, &list)
	assert.Empty(t, list.Items, "no policy line lets outsider get the set")
	status, body := s.Do(t, outsider, "GET", "/api/v1/applicationsets/fleet", nil)
	assert.Equal(t, http.StatusForbidden, status, body)
	assert.Contains(t, body, "get applicationsets fleet/fleet")

	b := newBrowser(t)
	b.login(s.URL, "admin", adminPassword(t))
	b.run("open the ApplicationSets", chromedp.Navigate(s.URL+"/applicationsets"))
	set := `article[aria-label="ApplicationSet fleet"]`
	b.waitFor("the set, its generator and its app", has(set, "fleet", "list", "fleet-one"), time.Minute)
	b.click(set + ` a[href="/applications/argocd/fleet-one"]`)
	b.waitFor("the generated app's page", has(`.app-header`, "fleet-one"), 30*time.Second)
}
