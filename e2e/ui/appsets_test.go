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
// its list (fleet-01 to fleet-12, each in its namespace), from the repo %s.
const fleetSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: fleet, namespace: argocd}
spec:
  generators:
  - list:
      elements: [{name: fleet-01}, {name: fleet-02}, {name: fleet-03}, {name: fleet-04}, {name: fleet-05}, {name: fleet-06},
        {name: fleet-07}, {name: fleet-08}, {name: fleet-09}, {name: fleet-10}, {name: fleet-11}, {name: fleet-12}]
  template:
    metadata: {name: '{{name}}'}
    spec:
      project: fleet
      source: {repoURL: %s, targetRevision: HEAD, path: app}
      destination: {server: https://kubernetes.default.svc, namespace: '{{name}}'}
      syncPolicy: {automated: {}, syncOptions: [CreateNamespace=true]}
`

// fleetProject lets the fleet's apps into their namespaces, fleet-*.
const fleetProject = `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: fleet, namespace: argocd}
spec:
  sourceRepos: ['*']
  destinations: [{server: '*', namespace: 'fleet-*'}]
  clusterResourceWhitelist: [{group: '', kind: Namespace}]
`

// TestWebUIApplicationSets: the ApplicationSets page shows a set with its
// generator and the apps it generated, linked to their pages; the REST
// API shows the set to whom the policy allows applicationsets, get on
// fleet/fleet, and to nobody else. The applications page shows its 12
// apps in pages of the size chosen, the counts being the whole list's.
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
	kubectl(t, fleetProject, "apply", "-f", "-")
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
		return len(set.Status.Resources) == 12 && set.Status.Resources[0].Name == "fleet-01", body
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
	b.waitFor("the set, its generator and its apps", has(set, "fleet", "list", "fleet-01", "fleet-12"), time.Minute)
	b.click(set + ` a[href="/applications/argocd/fleet-01"]`)
	b.waitFor("the generated app's page", has(`.app-header`, "fleet-01"), 30*time.Second)

	b.run("the applications, 10 a page", chromedp.Navigate(s.URL+"/applications?project=fleet&size=10"))
	b.waitFor("page 1 of 2, the title counting all 12", has(tiles+` h1`, "12 of 12")+" && "+has(`nav[aria-label=Pagination]`, "Page 1 of 2"), time.Minute)
	b.waitFor("10 tiles", tileCount(10), 30*time.Second)
	b.waitFor("fleet-10 is on page 1, fleet-11 is not", has(`article[aria-label="fleet-10"]`)+" && "+gone(`article[aria-label="fleet-11"]`), 30*time.Second)
	b.click(`nav[aria-label=Pagination] button:last-of-type`)
	b.waitFor("Next: page 2 holds fleet-11 and fleet-12, and the URL says so",
		has(`nav[aria-label=Pagination]`, "Page 2 of 2")+" && "+tileCount(2)+" && "+has(`article[aria-label="fleet-12"]`)+" && location.search.includes('page=2')", 30*time.Second)
	b.run("page 2 of a search that fits on one page", chromedp.Navigate(s.URL+"/applications?project=fleet&size=10&page=2&search=fleet-0"))
	b.waitFor("its one page: fleet-01 to fleet-09, no pages to turn", has(tiles+` h1`, "9 of 12")+" && "+gone(`nav[aria-label=Pagination] button:not([disabled])`)+" && "+tileCount(9), 30*time.Second)
}

// tileCount is an expression: the applications page shows n tiles.
func tileCount(n int) string {
	return fmt.Sprintf(`document.querySelectorAll('section[aria-label="Applications"] .tile').length === %d`, n)
}
