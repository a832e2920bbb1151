package bench

import (
	"context"
	"fmt"
	"path"
	"slices"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

// Issue 35's goals: each a median of at most 1 s. The issue says the
// applications page "stays responsive while they update" without a
// number; the probe's goal is RAIL's 100 ms of input delay.
const (
	goalUISeconds = 1.0
	goalUILagMs   = 100.0
)

var issue35 = "issue 35"

// uiPageSize is how many tiles the applications page shows at first (its
// default page size, server/ui/js/pager.js); size=all shows every app.
const uiPageSize = 50

// The apps of the ui scenario besides its fleet: the app of the tree, in
// every region, and the manual app whose status changes.
const (
	uiTreeApp   = "ui-tree"
	uiStatusApp = "ui-status"
)

const uiTitle = "Web UI in Chromium: the applications page, a resource tree, a status change"

// runUI runs the ui scenario on a stack of its own, with every region and
// a control cluster; without Chromium the report says so, and the stack
// does not start.
func runUI(ctx context.Context, cfg *Config, rep *Report) error {
	if _, err := chromium(); err != nil {
		rep.Add(&Section{Scenario: ScenarioUI, Title: uiTitle, Started: time.Now(), Skipped: say(uiText{Err: err.Error()}, "no-chromium")})
		return nil
	}
	return runSteps(ctx, cfg, rep, devenv.Options{Regions: cfg.Regions, Control: true}, []step{uiStep(cfg)})
}

// uiStep is the ui scenario; Run gives it a stack with every region and a
// control cluster.
func uiStep(cfg *Config) step {
	n := slices.Max(cfg.ScaleApps)
	timeout := 2*cfg.OnboardTimeout + time.Duration(cfg.UIUpdates)*cfg.OnboardTimeout/2 + 10*time.Minute + time.Duration(n)*40*time.Millisecond
	return step{ScenarioUI, uiTitle, timeout, WebUI, ""}
}

// uiSetup is the stack's side of the ui scenario: the fleet, its repos,
// the worker and the server.
type uiSetup struct {
	fleet  []appSpec
	repos  []*gitRepo
	status *gitRepo
	w      *Worker
	srv    *server
}

// WebUI measures issue 35's performance section in headless Chromium
// driven by chromedp, against ferry-server on a stack with every region
// and a control cluster: the applications page holding the largest fleet
// of -apps (its fleet, a tree app and a manual app), from navigation to
// every tile in the DOM; how late a timer ran and the longest main-thread
// task while the whole fleet syncs a new commit with that page open; an
// app of -ui-tree-resources resources over the regions, from navigation
// to every node of its tree in the DOM; a status change of the manual app,
// from the workflow task that set its search attribute to its app page
// and the applications page showing it.
func WebUI(ctx context.Context, e *Env, sec *Section) error {
	cfg, s := e.Cfg, e.Stack
	path, err := chromium()
	if err != nil {
		sec.Skipped = say(uiText{Err: err.Error()}, "no-chromium")
		return nil
	}
	n := slices.Max(cfg.ScaleApps)
	perRegion := (cfg.UITreeResources + len(s.Regions) - 1) / len(s.Regions)
	d := uiText{N: n, Fleet: max(n-2, 1), PerRepo: appsPerRepo, Regions: s.Regions, FirstRegion: s.Regions[0], TreeResources: perRegion * len(s.Regions),
		PerRegion: perRegion, TreeMix: resourceMix(perRegion), Runs: cfg.UIRuns, Updates: cfg.UIUpdates}
	repro := cfg.reproduce(ScenarioUI, fmt.Sprintf("-apps %d -ui-runs %d -ui-updates %d -ui-tree-resources %d", n, cfg.UIRuns, cfg.UIUpdates, cfg.UITreeResources))
	fig := func(id, title, unit, what string, goal float64) *Figure {
		f := &Figure{ID: "ui-" + id, Title: title, Unit: unit, Reproduce: repro, What: what}
		if goal > 0 {
			f.Goal = &Goal{Max: goal, Source: issue35}
		}
		sec.Figures = append(sec.Figures, f)
		return f
	}
	defer func() { sec.Text = say(d, "text") }()
	appsPage := fig("apps", fmt.Sprintf("Applications page, %d apps: navigation to its first page of tiles", n), "s", say(d, "what-apps"), goalUISeconds)
	appsAll := fig("apps-all", fmt.Sprintf("Applications page, %d apps on one page (size=all): navigation to every tile", n), "s", say(d, "what-apps-all"), 0)
	lag := fig("update-lag", fmt.Sprintf("Applications page, %d apps syncing: a timer's longest delay", n), "ms", say(d, "what-lag"), goalUILagMs)
	lag.Goal.Source = issue35 + " ('stays responsive'), read as RAIL's 100 ms input delay"
	idleLag := fig("update-idle-lag", fmt.Sprintf("An empty page while %d apps sync: the same timer's longest delay", n), "ms", say(d, "what-idle-lag"), 0)
	longest := fig("update-longtask", fmt.Sprintf("Applications page, %d apps syncing: the longest main-thread task", n), "ms", say(d, "what-longtask"), 0)
	tree := fig("tree", fmt.Sprintf("App page, %d resources over %d regions: navigation to the whole tree", d.TreeResources, len(s.Regions)), "s", say(d, "what-tree"), goalUISeconds)
	appPage := fig("status-app", "Status change to the app's page", "s", say(d, "what-status-app"), goalUISeconds)
	listPage := fig("status-list", "Status change to the applications page", "s", say(d, "what-status-list"), goalUISeconds)
	peer := fig("argocd", "Argo CD's UI, the same pages", "s", say(d, "what-peer"), 0)
	peer.Note = say(d, "peer-note")

	u, err := e.uiStack(ctx, &d, perRegion)
	if err != nil {
		return err
	}
	d.BrowserCPUs = e.Cfg.UIBrowserCPUs
	b, err := newUIBrowser(ctx, path, u.srv.URL, d.BrowserCPUs)
	if err != nil {
		return err
	}
	defer b.close()
	password, err := e.adminPassword(ctx)
	if err != nil {
		return err
	}
	if err := b.login("admin", password); err != nil {
		return err
	}
	if d.TreeItems, err = b.count(fmt.Sprintf(`fetch('/api/v1/applications/%s/resource-tree').then((r) => r.json()).then((t) => (t.nodes || []).length)`, uiTreeApp)); err != nil {
		return fmt.Errorf("the tree's nodes: %w", err)
	}
	tab, err := b.tab(uiWant{Tiles: min(n, uiPageSize), Total: n, TreeItems: d.TreeItems})
	if err != nil {
		return err
	}
	defer tab.close()
	// The tab of the applications page with every app on one page: the
	// status changes are watched there too.
	list, err := b.tab(uiWant{Tiles: n, Total: n})
	if err != nil {
		return err
	}
	defer list.close()

	e.logf("ui: the applications page, %d apps, %d runs after a warm-up, first its first page, then all on one", n, cfg.UIRuns)
	for _, p := range []struct {
		t     *uiTab
		path  string
		fig   *Figure
		loads *[]uiLoad
	}{{tab, "/applications", appsPage, &d.AppsLoads}, {list, "/applications?size=all", appsAll, &d.AppsAllLoads}} {
		for i := range cfg.UIRuns + 1 {
			l, err := uiLoadPage(p.t, p.path, "tiles", "/api/v1/applications", n, i)
			if err != nil {
				return err
			}
			if i > 0 {
				p.fig.Samples = append(p.fig.Samples, l.Seconds)
				*p.loads = append(*p.loads, l)
			}
		}
		if err := p.t.blank(); err != nil { // its stream closed: it costs the next loads nothing
			return err
		}
	}
	e.logf("ui: the tree of %s, %d items, %d runs after a warm-up", uiTreeApp, d.TreeItems, cfg.UIRuns)
	tree.What = say(d, "what-tree")
	for i := range cfg.UIRuns + 1 {
		// An app's page streams that app alone: one first message.
		l, err := uiLoadPage(tab, "/applications/"+s.ControlNamespace+"/"+uiTreeApp, "tree", "/resource-tree", 1, i)
		if err != nil {
			return err
		}
		if i > 0 {
			tree.Samples = append(tree.Samples, l.Seconds)
			d.TreeLoads = append(d.TreeLoads, l)
		}
	}

	// The manual app's page in this tab, the applications page with every
	// app on one page in the other.
	if err := tab.open("/applications/" + s.ControlNamespace + "/" + uiStatusApp); err != nil {
		return err
	}
	if err := list.open("/applications?size=all"); err != nil {
		return err
	}
	if _, err := list.mark("tiles", 2*time.Minute); err != nil {
		return err
	}
	// The status changes start once both pages have the first message of
	// each app they stream (the list every app, the app's page its own)
	// and their main threads are free.
	for t, apps := range map[*uiTab]int{list: n, tab: 1} {
		if _, err := t.streamed(apps, 5*time.Minute); err != nil {
			return err
		}
		if _, err := t.settle(5 * time.Minute); err != nil {
			return err
		}
	}
	e.logf("ui: %d status changes of %s each way", cfg.UIRuns, uiStatusApp)
	for i := range cfg.UIRuns {
		for _, to := range []string{"OutOfSync", "Synced"} {
			onApp, onList, err := e.uiStatusChange(ctx, u, tab, list, to, i+1)
			if err != nil {
				return err
			}
			appPage.Samples = append(appPage.Samples, onApp)
			listPage.Samples = append(listPage.Samples, onList)
		}
	}

	// The rounds probe the applications page as it opens, in the first
	// tab, and an empty page in the other.
	if _, err := uiLoadPage(tab, "/applications", "tiles", "/api/v1/applications", n, 0); err != nil {
		return err
	}
	e.logf("ui: %d rounds of the fleet syncing a new commit, the applications page open", cfg.UIUpdates)
	for r := range cfg.UIUpdates {
		p, took, err := e.uiUpdateRound(ctx, u, tab, list, r+1)
		if err != nil && !p.cut {
			return err
		}
		lag.Samples = append(lag.Samples, p.Lag)
		longest.Samples = append(longest.Samples, p.Longest)
		idleLag.Samples = append(idleLag.Samples, p.idle)
		d.Rounds = append(d.Rounds, uiRound{Round: r + 1, Seconds: took.Seconds(), LongTasks: p.LongCount, Longest: p.Longest, Lag: p.Lag, IdleLag: p.idle, Cut: p.cut})
		if err != nil {
			return err
		}
	}
	return nil
}

// uiStack starts the worker and the server, pushes the fleet (one
// ConfigMap an app, appsPerRepo apps to a repo, spread over the regions),
// the tree app and the manual app, applies them, and waits until the
// fleet and the tree are Synced and Healthy and the manual app is synced.
func (e *Env) uiStack(ctx context.Context, d *uiText, perRegion int) (*uiSetup, error) {
	s := e.Stack
	u := &uiSetup{}
	var err error
	if u.w, err = e.StartWorker(ctx, "ui"); err != nil {
		return nil, err
	}
	d.Webhook = u.w.Webhook
	if u.srv, err = e.startServer(ctx); err != nil {
		return nil, err
	}
	for r := 0; r*appsPerRepo < d.Fleet; r++ {
		repo, err := e.newRepo(ctx, fmt.Sprintf("ui-fleet-%02d", r))
		if err != nil {
			return nil, err
		}
		for i := r * appsPerRepo; i < min(d.Fleet, (r+1)*appsPerRepo); i++ {
			a := appSpec{Name: fmt.Sprintf("app-%04d", i), RepoURL: repo.URL, Regions: []string{s.Regions[i%len(s.Regions)]}}
			a.Path, a.Namespace = path.Join("apps", a.Name), a.Name
			u.fleet = append(u.fleet, a)
		}
		u.repos = append(u.repos, repo)
	}
	if _, err := e.pushFleet(ctx, u, 0); err != nil {
		return nil, err
	}
	treeRepo, err := e.sizedRepo(ctx, perRegion)
	if err != nil {
		return nil, err
	}
	if u.status, err = e.newRepo(ctx, uiStatusApp); err != nil {
		return nil, err
	}
	if err := u.status.write(map[string]string{"app/settings.yaml": configMapYAML("settings", 0)}); err != nil {
		return nil, err
	}
	if _, err := u.status.commitAndPush(ctx, "settings"); err != nil {
		return nil, err
	}
	apps := append(slices.Clone(u.fleet),
		appSpec{Name: uiTreeApp, RepoURL: treeRepo.URL, Path: "app", Namespace: uiTreeApp, Regions: s.Regions},
		appSpec{Name: uiStatusApp, RepoURL: u.status.URL, Path: "app", Namespace: uiStatusApp, Regions: s.Regions[:1], Manual: true})
	octx, cancel := context.WithTimeout(ctx, e.Cfg.OnboardTimeout)
	defer cancel()
	e.logf("ui: ferry app apply of %d apps", len(apps))
	began := time.Now()
	if _, err := e.applyFleet(octx, apps); err != nil {
		return nil, fmt.Errorf("ferry app apply: %w", err)
	}
	took, err := e.waitApps(octx, u.w, "ui: the fleet", synced, len(apps)-1, began)
	if err != nil {
		return nil, err
	}
	d.Onboarded = took.Round(time.Second).String()
	if _, err := ferryclient.Sync(octx, e.Temporal, uiStatusApp, contract.SyncRequest{}, client.WorkflowUpdateStageAccepted); err != nil {
		return nil, fmt.Errorf("sync %s: %w", uiStatusApp, err)
	}
	if _, _, err := e.waitSynced(octx, uiStatusApp, "", s.Regions[:1], true, 100*time.Millisecond); err != nil {
		return nil, err
	}
	return u, nil
}
