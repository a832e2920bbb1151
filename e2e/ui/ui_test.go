package ui

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

// web is the demo's Deployment, with replicas to change.
func web(replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: nginx:1.27}
`, replicas)
}

// settingsWave1 is a ConfigMap of sync wave 1, and migrateHook a PreSync
// hook that its delete policy keeps: the tree shows both for what they are.
const (
	settingsWave1 = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations: {argocd.argoproj.io/sync-wave: "1"}
data: {mode: demo}
`
	migrateHook = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {argocd.argoproj.io/hook: PreSync, argocd.argoproj.io/hook-delete-policy: BeforeHookCreation}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox:1.36, command: ["true"]}]
`
)

// startDemo starts the worker and the server, and the app name deploying
// web(2), synced; it answers the server, the admin's token and the repo.
func startDemo(t *testing.T, e *e2etest.Env, name string) (*e2etest.Server, string, *e2etest.Repo) {
	t.Helper()
	// The workflows' details in the Temporal Web UI link to the server's pages.
	e.StartWorker(t, append(e.AllRoles(), "--ui-url", "https://"+e.Stack.ServerListen)...)
	s := e.StartServer(t)
	admin := s.Login(t, "admin", adminPassword(t))
	repo, _ := s.DeployTeamApp(t, e, admin, name, map[string]string{"app/web.yaml": web(2),
		"app/settings.yaml": settingsWave1, "app/migrate.yaml": migrateHook})
	return s, admin, repo
}

const (
	tiles    = `section[aria-label="Applications"]`
	demoTile = `article[aria-label="demo"]`
	tree     = `[role=tree][aria-label="Resources in us-east-1"]`
	deploy   = tree + ` [role=treeitem][aria-label="Deployment/web"]`
	header   = `.app-header`
)

// deletedMeanwhile makes the page's list of apps, and its read of one app,
// answer an app that does not exist, as if it was deleted between that
// read and the stream the page opens after it.
const deletedMeanwhile = `(() => {
  const real = window.fetch;
  const app = {metadata: {name: 'deleted-meanwhile', namespace: 'argocd'}, spec: {project: 'demo', source: {repoURL: 'https://git.invalid/x.git'}},
    status: {sync: {status: 'Synced'}, health: {status: 'Healthy'}}};
  const json = (v) => new Response(JSON.stringify(v), {status: 200, headers: {'Content-Type': 'application/json'}});
  window.fetch = async (input, init) => {
    const path = new URL(typeof input === 'string' ? input : input.url, location.href).pathname;
    if ((init || {}).method === 'GET' && path === '/api/v1/applications/deleted-meanwhile') {
      window.deletedMeanwhileRead = true;
      return json(app);
    }
    const resp = await real(input, init);
    if ((init || {}).method === 'GET' && path === '/api/v1/applications' && resp.ok) {
      const list = await resp.json();
      list.items = [...(list.items || []), app];
      window.deletedMeanwhileListed = true;
      return json(list);
    }
    return resp;
  };
})()`

// TestWebUI: the admin logs in, sees the demo app Synced and Healthy per
// region, and not an app deleted between the page's list and its stream;
// filters demo away, opens it: the tree of us-east-1 holds its
// Deployment, ReplicaSet and Pods, and the Deployment's live manifest. A
// commit shows OutOfSync without a reload, its diff names the change, and
// Sync in the dialog brings it back to Synced and Healthy, the header
// naming that commit's message and author. Delete without
// cascade leaves the objects and the app leaves the list.
func TestWebUI(t *testing.T) {
	e := newEnv(t)
	kubectl(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-rbac-cm, namespace: argocd}\ndata: {}\n", "apply", "-f", "-")
	s, admin, repo := startDemo(t, e, "demo")
	b := newBrowser(t)
	b.beforeEachPage(deletedMeanwhile)
	b.run("open the server", chromedp.Navigate(s.URL+"/"))
	b.waitFor("the login page at /", has(`form[aria-label="Log in"]`), 30*time.Second)
	b.login(s.URL, "admin", adminPassword(t))
	b.waitFor("the applications page with demo Synced and Healthy in us-east-1",
		has(demoTile+` ul[aria-label=Regions]`, "us-east-1", "Synced", "Healthy"), 3*time.Minute)
	b.waitFor("nothing left of the page's loading text", `!document.body.innerText.includes('Loading')`, 30*time.Second)
	b.waitFor("an app the list named and the stream did not (deleted between them) leaves the page",
		`window.deletedMeanwhileListed === true && `+gone(`article[aria-label="deleted-meanwhile"]`), 30*time.Second)
	b.run("open the app deleted meanwhile", chromedp.Navigate(s.URL+"/applications/argocd/deleted-meanwhile"))
	b.waitFor("its page says it was deleted", `window.deletedMeanwhileRead === true && `+
		has(`[role=status]`, "Application deleted-meanwhile was deleted"), 30*time.Second)
	b.run("back to every app", chromedp.Navigate(s.URL+"/applications"))
	b.waitFor("demo, and the page's list done", has(demoTile)+` && window.deletedMeanwhileListed === true && `+
		gone(`article[aria-label="deleted-meanwhile"]`), 30*time.Second)
	b.screenshot("ui-applications")

	b.run("filter OutOfSync", chromedp.Navigate(s.URL+"/applications?sync=OutOfSync"))
	b.waitFor("the filter hides demo", has(tiles+` h1`, "0 of")+" && "+gone(demoTile), 30*time.Second)

	b.run("back to every app", chromedp.Navigate(s.URL+"/applications"))
	b.click(demoTile + ` h2 a`)
	b.waitFor("the tree: Deployment/web, a ReplicaSet under it, Pods under that",
		has(deploy+` [role=treeitem][aria-label^="ReplicaSet/web-"] [role=treeitem][aria-label^="Pod/web-"]`), time.Minute)
	b.waitFor("the ConfigMap's wave and the PreSync hook that ran, with its Pod",
		has(tree+` [role=treeitem][aria-label="ConfigMap/settings"] > .node`, "wave 1")+" && "+
			has(tree+` [role=treeitem][aria-label="Job/migrate"] > .node`, "PreSync hook", "Succeeded")+" && "+
			has(tree+` [role=treeitem][aria-label="Job/migrate"] [role=treeitem][aria-label^="Pod/migrate-"]`), time.Minute)
	b.run("walk the tree from the keyboard: Deployment/web, down to its ReplicaSet, Enter",
		chromedp.Focus(chromedp.CSS(deploy)), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter))
	b.waitFor("the ReplicaSet's panel", `(document.querySelector('aside.panel') || {}).getAttribute?.('aria-label')?.startsWith('ReplicaSet/web-')`, 30*time.Second)
	b.click(`.panel header button[aria-label=Close]`)
	b.click(deploy + ` [role=treeitem][aria-label^="Pod/web-"] > .node`)
	b.press(`.panel [role=tablist]`, "Logs")
	b.waitFor("the pod's log, streamed", has(`pre[aria-label="Logs"]`, "nginx: "+devenv.FakeLogLine), 30*time.Second)
	b.click(`.panel header button[aria-label=Close]`)
	b.click(deploy + ` > .node`)
	b.waitFor("the Deployment's live manifest", has(`pre[aria-label="Live manifest"]`, `"kind": "Deployment"`, `"replicas": 2`), 30*time.Second)
	b.screenshot("ui-app-tree")

	// A commit, and a refresh as its webhook would ask: the open page
	// follows without a reload.
	b.run("mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	repo.Write(map[string]string{"app/web.yaml": web(3)})
	three := repo.CommitAndPush("three replicas")
	s.MustDo(t, admin, "GET", "/api/v1/applications/demo?refresh=normal", nil, http.StatusOK, nil)
	b.waitFor("OutOfSync without a reload", has(header, "OutOfSync")+" && window.notReloaded === true", 2*time.Minute)
	b.press(`.panel [role=tablist]`, "Diff")
	b.waitFor("the diff of Deployment/web names the change", has(`[aria-label="Diff"] pre.diff`, "-  replicas: 2", "+  replicas: 3"), time.Minute)
	b.screenshot("ui-diff")

	b.click(`.panel header button[aria-label=Close]`)
	b.press(`.actions`, "Sync")
	b.waitFor("the sync dialog", has(`dialog[open][aria-label="Sync demo"]`, "Prune", "Dry run", "Force", "Apply out of sync only", "Deployment/web"), 30*time.Second)
	b.click(`dialog[open] button[type=submit]`)
	b.waitFor("Synced and Healthy without a reload", has(header, "Synced", "Healthy")+" && !document.querySelector('.app-header').innerText.includes('OutOfSync') && window.notReloaded === true", 3*time.Minute)
	b.waitFor("the header names the synced commit: its revision, message and author",
		has(header+` .revision`, three[:7], "three replicas", "ferry-e2e <e2e@ferry.invalid>"), time.Minute)

	b.waitFor("a link to the app's workflow in the Temporal Web UI", has(header+` a[href*="/workflows/app%2Fdemo"]`, "Workflow in Temporal"), 30*time.Second)
	workflowURL, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('.app-header a[href*="/workflows/"]').href`))
	require.NoError(t, err)
	back := s.URL + "/applications/argocd/demo"
	b.linkInTemporalUI(workflowURL, "demo", back)
	b.run("follow the link back", chromedp.Navigate(back))
	b.waitFor("the app's page, from the workflow's link", has(header, "demo", "Synced"), 30*time.Second)
	b.click(deploy + ` > .node`)
	b.waitFor("the Deployment's actions", has(`[aria-label="Resource actions"]`, "restart"), 30*time.Second)
	b.press(`[aria-label="Resource actions"]`, "restart")
	b.waitFor("the restart's dialog", has(`dialog[open][aria-label="Run restart on Deployment/web"]`), 30*time.Second)
	b.click(`dialog[open] button[type=submit]`)
	b.waitFor("what the restart did", has(`[aria-label="Resource actions"] [role=status]`, "us-east-1", "restarted"), time.Minute)
	b.click(`.panel header button[aria-label=Close]`)

	b.press(`.actions`, "Delete")
	b.waitFor("the delete dialog", has(`dialog[open][aria-label="Delete demo"]`, "Cascade"), 30*time.Second)
	b.click(`dialog[open] input[name=cascade]`)
	b.run("confirm the delete", chromedp.SendKeys(chromedp.CSS(`dialog[open] input[name=confirm]`), "demo"))
	b.click(`dialog[open] button[type=submit]`)
	b.waitFor("the app leaves the list", has(tiles)+" && "+gone(demoTile), 2*time.Minute)
	b.click(`nav a[href="/projects"]`)
	b.waitFor("the projects page", has(`article[aria-label="Project demo"]`, "Its applications"), 30*time.Second)
	cfg, err := stack.RestConfig(regions[0])
	require.NoError(t, err)
	dc, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	_, err = dc.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("demo").
		Get(context.Background(), "web", metav1.GetOptions{})
	assert.NoError(t, err, "a delete without cascade leaves the Deployment")
}

// TestWebUIViewerHasNoSync: a Dex user whose role may only get the app
// logs in through Dex's real form, sees the app without a Sync button, and
// a sync request made by hand from that session is refused.
func TestWebUIViewerHasNoSync(t *testing.T) {
	e := newEnv(t)
	require.NotEmpty(t, stack.OIDCIssuer, "the stack runs Dex")
	kubectl(t, e2etest.SSOConfig(stack), "apply", "-f", "-")
	kubectl(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: argocd}
data:
  policy.csv: |
    p, role:viewer, applications, get, viewed/*, allow
    g, team-a, role:viewer
`, "apply", "-f", "-")
	s, _, _ := startDemo(t, e, "viewed")
	e2etest.StoreSSOSecret(t, stack)

	b := newBrowser(t)
	b.run("open the login page", chromedp.Navigate(s.URL+"/login"))
	b.waitFor("the SSO button", has(`a.sso`, "Log in via Dex"), 30*time.Second)
	b.click(`a.sso`)
	// Filled and sent in one evaluation in the page, retried until the
	// form is there: chromedp's SendKeys holds a DOM node id between its
	// query and its keys, and Dex's page can be replaced in between ("Could
	// not find node with given id", seen in CI).
	b.waitFor("log in at Dex as alice, of group team-a", `(() => {
		const p = document.querySelector('input[name=password]');
		if (!p || !p.form) return false;
		p.form.querySelector('input[name=login]').value = 'alice@example.com';
		p.value = 'alice-password';
		p.form.requestSubmit();
		return true;
	})()`, 30*time.Second)
	b.waitFor("back at the applications, as alice", has(`header.top`, "alice@example.com")+" && "+has(`article[aria-label="viewed"]`), time.Minute)
	b.click(`article[aria-label="viewed"] h2 a`)
	b.waitFor("the app's page with its Refresh button", has(`.actions`, "Refresh"), 30*time.Second)
	buttons, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('.actions').innerText`))
	require.NoError(t, err)
	assert.NotContains(t, buttons, "Sync", "no Sync button for a role that may only get")
	assert.NotContains(t, buttons, "Delete")
	assert.Equal(t, http.StatusForbidden, b.fetch("POST", "/api/v1/applications/viewed/sync", "{}"), "a hand-made sync from the session")
}
