package bench

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
)

// uiText is the data of text/ui.md.tmpl.
type uiText struct {
	N, Fleet, PerRepo, PerRegion, TreeResources, TreeItems int
	Runs, Updates                                          int
	Regions                                                []string
	TreeMix, FirstRegion, Onboarded, Err                   string
	// BrowserCPUs are the CPUs Chromium ran on (-ui-browser-cpus); empty:
	// any.
	BrowserCPUs                        string
	Webhook                            bool
	Rounds                             []uiRound
	AppsLoads, AppsAllLoads, TreeLoads []uiLoad
}

// uiLoad is one counted load of a page: when it held all it waits for,
// when it first held some and how many, and its API requests of interest.
type uiLoad struct {
	Run                     int
	Seconds, FirstAt, Quiet float64
	Streamed                float64 // the stream's first message of every app
	FirstCount              int
	Fetches                 string
}

// uiLoadPage opens path in tab and answers its load: mark is the mark to
// wait for (tiles, tree), api the requests to list, apps the stream's
// first messages to wait for before the main thread is free.
func uiLoadPage(tab *uiTab, path, mark, api string, apps, run int) (uiLoad, error) {
	l := uiLoad{Run: run}
	if err := tab.open(path); err != nil {
		return l, err
	}
	var err error
	if l.Seconds, err = tab.mark(mark, 2*time.Minute); err != nil {
		return l, err
	}
	if l.FirstAt, l.FirstCount, err = tab.firstShown(mark); err != nil {
		return l, err
	}
	if l.Fetches, err = tab.fetches(api); err != nil {
		return l, err
	}
	if l.Streamed, err = tab.streamed(apps, 5*time.Minute); err != nil {
		return l, err
	}
	l.Quiet, err = tab.settle(5 * time.Minute)
	return l, err
}

// uiRound is one round of the fleet syncing a new commit: how long until
// the visibility store counted it all Synced at it, and what the probe of
// the applications page saw meanwhile.
type uiRound struct {
	Round, LongTasks      int
	Seconds, Longest, Lag float64
	IdleLag               float64 // the same timer in an empty page (uiTab.idleProbe)
	// Cut: the fleet was not all Synced within -onboard-timeout.
	Cut bool
}

func (uiText) textFile() string { return "ui" }

// uiAfterSynced is how long the applications page is watched after the
// visibility store counted the whole fleet Synced at the new commit: the
// server's stream reads the apps' changes every 500 ms (server/hub.go),
// so the last of them reach the page well within that.
const uiAfterSynced = 5 * time.Second

// pushFleet writes every fleet app's ConfigMap at rev and pushes each
// repo; it answers the commits, one a repo.
func (e *Env) pushFleet(ctx context.Context, u *uiSetup, rev int) ([]commit, error) {
	var commits []commit
	for r, repo := range u.repos {
		files := map[string]string{}
		for _, a := range u.fleet[r*appsPerRepo : min(len(u.fleet), (r+1)*appsPerRepo)] {
			files[path.Join(a.Path, "settings.yaml")] = configMapYAML("settings", rev)
		}
		if err := repo.write(files); err != nil {
			return nil, err
		}
		c, err := repo.commitAndPush(ctx, fmt.Sprintf("settings at %d", rev))
		if err != nil {
			return nil, err
		}
		commits = append(commits, c)
	}
	return commits, nil
}

// uiUpdateRound pushes a new commit to every fleet repo with the
// applications page open in list, notifies the apps (a GitHub push
// delivery a repo, or the refresh signal an app when the worker has no
// webhook), and probes the page until the visibility store counts every
// fleet app Synced at its new commit and uiAfterSynced has passed; idle
// probes an empty page meanwhile (p.idle).
func (e *Env) uiUpdateRound(ctx context.Context, u *uiSetup, list, idle *uiTab, rev int) (p probe, _ time.Duration, err error) {
	if err := list.startProbe(); err != nil {
		return probe{}, 0, err
	}
	stopIdle, err := idle.idleProbe()
	if err != nil {
		return probe{}, 0, err
	}
	defer func() {
		var idleErr error
		if p.idle, idleErr = stopIdle(); idleErr != nil {
			err = errors.Join(err, idleErr)
		}
	}()
	began := time.Now()
	commits, err := e.pushFleet(ctx, u, rev)
	if err != nil {
		return probe{}, 0, err
	}
	var shas []string
	for i, c := range commits {
		shas = append(shas, fmt.Sprintf("%s = '%s'", contract.SearchRev, c.SHA))
		if u.w.Webhook {
			if err := deliverGitHub(ctx, u.w.WebhookAddr, u.repos[i], c); err != nil {
				return probe{}, 0, err
			}
		}
	}
	if !u.w.Webhook {
		if err := e.forApps(ctx, names(u.fleet), func(ctx context.Context, name string) error {
			return ferryclient.Refresh(ctx, e.Temporal, name, false)
		}); err != nil {
			return probe{}, 0, err
		}
	}
	octx, cancel := context.WithTimeout(ctx, e.Cfg.OnboardTimeout)
	defer cancel()
	where := fmt.Sprintf("%s AND (%s)", synced, strings.Join(shas, " OR "))
	took, waitErr := e.waitApps(octx, u.w, fmt.Sprintf("ui: round %d", rev), where, len(u.fleet), began)
	if waitErr != nil {
		// The fleet did not sync within the limit: what the probe saw
		// until then is still the page's, the round reported as cut.
		took = time.Since(began)
	} else {
		sleep(ctx, uiAfterSynced)
	}
	p, err = list.stopProbe()
	if err != nil {
		return p, took, errors.Join(waitErr, err)
	}
	p.cut = waitErr != nil
	return p, took, waitErr
}

// uiStatusChange changes the manual app's status to OutOfSync (a commit
// to its repo, then the refresh signal) or to Synced (a sync), with its
// page open in app and the applications page in list, and answers the
// seconds from the workflow task that upserted the new status to each page
// showing it.
func (e *Env) uiStatusChange(ctx context.Context, u *uiSetup, app, list *uiTab, to string, rev int) (onApp, onList float64, err error) {
	mark, err := e.runLength(ctx, uiStatusApp)
	if err != nil {
		return 0, 0, err
	}
	if err := app.watch(`.app-header .status.sync`, to); err != nil {
		return 0, 0, fmt.Errorf("watch the app's page: %w", err)
	}
	if err := list.watch(fmt.Sprintf(`article[aria-label=%q] .status.sync`, uiStatusApp), to); err != nil {
		return 0, 0, fmt.Errorf("watch the applications page: %w", err)
	}
	if to == "Synced" {
		if _, err := ferryclient.Sync(ctx, e.Temporal, uiStatusApp, contract.SyncRequest{}, client.WorkflowUpdateStageAccepted); err != nil {
			return 0, 0, fmt.Errorf("sync %s: %w", uiStatusApp, err)
		}
	} else {
		if err := u.status.write(map[string]string{"app/settings.yaml": configMapYAML("settings", rev)}); err != nil {
			return 0, 0, err
		}
		if _, err := u.status.commitAndPush(ctx, fmt.Sprintf("settings at %d", rev)); err != nil {
			return 0, 0, err
		}
		if err := ferryclient.Refresh(ctx, e.Temporal, uiStatusApp, false); err != nil {
			return 0, 0, err
		}
	}
	atApp, err := app.watched(time.Minute)
	if err != nil {
		return 0, 0, fmt.Errorf("the app's page: %w", err)
	}
	atList, err := list.watched(time.Minute)
	if err != nil {
		return 0, 0, fmt.Errorf("the applications page: %w", err)
	}
	upserted, err := e.statusUpserted(ctx, uiStatusApp, mark, to)
	if err != nil {
		return 0, 0, err
	}
	if to == "Synced" { // the sync ends before the next commit
		if _, _, err := e.waitSynced(ctx, uiStatusApp, "", e.Stack.Regions[:1], true, 100*time.Millisecond); err != nil {
			return 0, 0, err
		}
	}
	return atApp.Sub(upserted).Seconds(), atList.Sub(upserted).Seconds(), nil
}
