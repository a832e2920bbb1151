package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// argoOnboardLimit is how many times Ferry's onboarding limit Argo CD's
// gets: at about one app a second on 2 cores, 1,000 apps take it longer
// than Ferry's ten minutes, and its idle cost is of a whole fleet.
const argoOnboardLimit = 3

// argoFleet is Argo CD's fleet of n apps on the stack of Ferry's fleet of
// the same size, with Ferry's worker stopped: the same generated files in
// repos of their own, one automated Application per app into a namespace
// of its own, at Argo CD's default resync.
type argoFleet struct {
	argo   *argo
	apps   []argoApp
	repos  []*gitRepo
	synced int
	// adopt: the fleet's objects were applied before its Applications, as
	// Argo CD's sync leaves them (argocd_adopt.go).
	adopt bool
	// poll is the Ferry fleet's poll interval beside it (argoResync).
	poll time.Duration
	// The stack's own API request rate before Argo CD ran, per second.
	backgroundAll, backgroundApp float64
}

// ferryDefaultPoll is Ferry's default poll interval: a fleet that polls
// so is compared with Argo CD at its own default resync, as each system
// runs out of the box; a fleet at another poll with Argo CD at the same.
const ferryDefaultPoll = 180 * time.Second

// argoResync is the resync Argo CD runs with beside a Ferry fleet polling
// every poll (zero: Argo CD's default), the mean interval between two
// reconciles of an app, and the longest.
func argoResync(poll time.Duration) (resync, mean, longest time.Duration) {
	if poll == ferryDefaultPoll {
		// 120 s plus up to 60 s of jitter.
		return 0, 150 * time.Second, 180 * time.Second
	}
	// Plus up to a tenth as jitter (devenv), as Ferry's poll.
	return poll, poll + poll/20, poll + poll/10
}

// ArgoOnboard has Argo CD onboard n apps: their Applications applied into
// its namespace applyParallel at a time, as `ferry app apply` applies
// Ferry's, then the time until every one is Synced at the commit and
// Healthy. ferry is Ferry's onboarding section of the same fleet (its
// time and the kubectl floor give the ratios); ferryFleet's worker, if it
// still runs, is stopped first.
func ArgoOnboard(ctx context.Context, e *Env, sec *Section, n int, poll time.Duration, ferry *Section, ferryFleet *fleet) (*argoFleet, error) {
	cfg := e.Cfg
	region := e.Stack.Regions[0]
	if ferryFleet != nil && ferryFleet.worker != nil {
		ferryFleet.worker.Stop()
	}
	specs, repos, err := e.fleetRepos(ctx, "argocd-", n, 0, region)
	if err != nil {
		return nil, err
	}
	af := &argoFleet{repos: repos, poll: poll, adopt: cfg.ArgoAdopt}
	commits, dirs := map[string]string{}, map[string]string{}
	byURL := map[string]*gitRepo{}
	for _, r := range repos {
		byURL[r.URL] = r
		if commits[r.URL], err = r.git(ctx, "rev-parse", "HEAD"); err != nil {
			return af, err
		}
	}
	for _, s := range specs {
		af.apps = append(af.apps, argoApp{Name: s.Name, RepoURL: s.RepoURL, Path: s.Path, Namespace: s.Namespace, Dest: region})
		dirs[s.Name] = byURL[s.RepoURL].Path(s.Path)
	}
	var adoptTook time.Duration
	if af.adopt {
		e.logf("argo cd: applying the objects of %d apps as its sync would (adopt)", n)
		if adoptTook, err = e.argoAdopt(ctx, region, af.apps, dirs); err != nil {
			return af, err
		}
		e.logf("argo cd: the objects of %d apps applied in %s", n, adoptTook.Round(time.Second))
	}
	if af.backgroundAll, af.backgroundApp, err = e.backgroundRate(ctx, region, 10*time.Second); err != nil {
		return af, err
	}
	resync, _, _ := argoResync(poll)
	if af.argo, err = e.startArgo(ctx, devenv.ArgoCDOptions{Name: fmt.Sprintf("argocd-fleet-%d", n), Resync: resync}); err != nil {
		return af, err
	}

	limit := argoOnboardLimit * cfg.OnboardTimeout
	octx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	e.logf("argo cd: onboarding %d apps", n)
	procs := af.argo.cd.Pids()
	cpu0, err := sampleProcs(procs)
	if err != nil {
		return af, err
	}
	began := time.Now()
	g, gctx := errgroup.WithContext(octx)
	g.SetLimit(applyParallel)
	for _, a := range af.apps {
		g.Go(func() error { return af.argo.apply(gctx, a) })
	}
	applyErr := g.Wait()
	appliedIn := time.Since(began)
	var rss []float64
	last := time.Now()
	for octx.Err() == nil && applyErr == nil {
		af.synced, err = af.countSynced(octx, commits)
		if err == nil && af.synced >= n {
			break
		}
		if now, err := sampleProcs(procs); err == nil {
			rss = append(rss, sumRSS(now))
		}
		if time.Since(last) > 15*time.Second {
			e.logf("argo cd: %d of %d Synced and Healthy after %s", af.synced, n, time.Since(began).Round(time.Second))
			last = time.Now()
		}
		if err := af.argo.cd.Exited(); err != nil {
			return af, err
		}
		sleep(octx, 2*time.Second)
	}
	took := time.Since(began)
	cpu1, err := sampleProcs(procs)
	if err != nil {
		return af, err
	}
	coreSeconds := 0.0
	for name := range procs {
		coreSeconds += CPUCores(cpu0[name], cpu1[name]) * took.Seconds()
	}
	if applyErr != nil {
		return af, fmt.Errorf("argo cd: apply the fleet's Applications: %w", applyErr)
	}

	repro := cfg.reproduce(ScenarioOnboarding, fmt.Sprintf("-apps %d -app-resources %d", n, cfg.AppResources))
	verb, tag := "Onboard", fmt.Sprintf("onboard-%d-argocd", n)
	if af.adopt {
		repro += " -argocd-adopt"
		verb, tag = "Adopt", fmt.Sprintf("adopt-%d-argocd", n)
	}
	d := argoOnboardText{Adopted: af.adopt, AdoptTook: adoptTook.Round(time.Second).String(), N: n, Version: af.argo.cd.Version, Region: region, Namespace: devenv.ArgoCDNamespace, Mix: resourceMix(cfg.AppResources),
		Repos: plural(len(repos), "repo"), PerRepo: appsPerRepo, Parallel: applyParallel, ApplyTook: appliedIn.Round(100 * time.Millisecond).String(),
		Synced: af.synced, AppsPerSec: float64(af.synced) / took.Seconds(), CPUPerApp: coreSeconds / float64(max(af.synced, 1)),
		PeakRSS: slices.Max(append(rss, 0)), Timeout: limit.String(), Logs: af.argo.logs()}
	if af.adopt {
		if d.SyncedItself, err = af.argoSyncedByItself(ctx); err != nil {
			return af, err
		}
	}
	all := &Figure{ID: tag + "-all", Title: fmt.Sprintf("%s %d apps, Argo CD, all Synced and Healthy", verb, n), Unit: "s", Reproduce: repro,
		What: say(d, "what-all")}
	if af.synced == n {
		all.Samples = []float64{took.Seconds()}
	} else {
		all.Note = say(d, "not-reached")
	}
	sec.Figures = append(sec.Figures, all,
		&Figure{ID: tag + "-apply", Title: fmt.Sprintf("%s %d apps, Argo CD, Applications applied", verb, n), Unit: "s",
			Samples: []float64{appliedIn.Seconds()}, Reproduce: repro, What: say(d, "what-apply")},
		&Figure{ID: tag + "-cpu", Title: fmt.Sprintf("%s %d apps, Argo CD, CPU per Synced app", verb, n), Unit: "core-s",
			Samples: []float64{d.CPUPerApp}, Reproduce: repro, What: say(d, "what-cpu")},
		&Figure{ID: tag + "-rss", Title: fmt.Sprintf("%s %d apps, Argo CD, memory", verb, n), Unit: "MiB",
			Samples: rss, Reproduce: repro, What: say(d, "what-rss")})
	if len(all.Samples) == 1 && !af.adopt { // an adopted fleet was not onboarded by Argo CD
		if ferryAll := figureOf(ferry, fmt.Sprintf("onboard-%d-all", n)); ferryAll != nil && ferryAll.Summary().N == 1 {
			sec.Figures = append(sec.Figures, &Figure{ID: tag + "-ratio", Title: fmt.Sprintf("Onboard %d apps, Ferry / Argo CD", n), Unit: "×",
				Samples: []float64{ferryAll.Samples[0] / all.Samples[0]}, Reproduce: repro, What: say(d, "what-ratio")})
			d.Ratio = true
		}
		if floor := figureOf(ferry, fmt.Sprintf("onboard-%d-floor", n)); floor != nil && floor.Summary().N == 1 {
			sec.Figures = append(sec.Figures, &Figure{ID: tag + "-floor-ratio", Title: fmt.Sprintf("Onboard %d apps, Argo CD / the kubectl floor", n), Unit: "×",
				Samples: []float64{all.Samples[0] / floor.Samples[0]}, Reproduce: repro, What: say(d, "what-floor-ratio")})
		}
	}
	sec.Text = say(d, "text")
	return af, nil
}

// countSynced counts the fleet's Applications that are Synced at their
// repo's commit and Healthy.
func (af *argoFleet) countSynced(ctx context.Context, commits map[string]string) (int, error) {
	list, err := af.argo.apps().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, u := range list.Items {
		str := func(path ...string) string {
			s, _, _ := unstructured.NestedString(u.Object, path...)
			return s
		}
		repo := str("spec", "source", "repoURL")
		if str("status", "sync", "status") == "Synced" && str("status", "health", "status") == "Healthy" &&
			commits[repo] != "" && str("status", "sync", "revision") == commits[repo] {
			n++
		}
	}
	return n, nil
}

// reconciles is the application controller's count of app reconciles so
// far (argocd_app_reconcile, a histogram: its _count).
func (a *argo) reconciles() (float64, error) {
	resp, err := http.Get("http://" + a.cd.ControllerMetrics + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("scrape argo cd's controller metrics: %w", err)
	}
	defer resp.Body.Close()
	return sumMetricWhere(resp.Body, "argocd_app_reconcile_count", "", "")
}

// figureOf is the figure of sec with id, or nil.
func figureOf(sec *Section, id string) *Figure {
	if sec == nil {
		return nil
	}
	for _, fg := range sec.Figures {
		if fg.ID == id {
			return fg
		}
	}
	return nil
}

func sumRSS(procs map[string]ProcSample) float64 {
	sum := 0.0
	for _, p := range procs {
		sum += float64(p.RSS) / (1 << 20)
	}
	return sum
}

// argoOnboardText is the data of text/argocd_fleet.md.tmpl's onboarding
// blocks.
type argoOnboardText struct {
	N, PerRepo, Parallel, Synced                 int
	Version, Region, Namespace, Mix, Logs, Repos string
	ApplyTook, Timeout                           string
	AppsPerSec, CPUPerApp, PeakRSS               float64
	// Adopted: the objects were applied first, in AdoptTook (argoAdopt);
	// SyncedItself of the apps Argo CD synced all the same.
	Adopted      bool
	AdoptTook    string
	SyncedItself int
	// Ratio: Ferry's onboarding of the same fleet ran in this run.
	Ratio bool
}

func (argoOnboardText) textFile() string { return "argocd_onboard" }

// argoFleetSteps are Argo CD's onboarding and idle of a fleet of n apps,
// after Ferry's on the same stack (*ferryFleet, whose worker they stop;
// *ferryOnboard and *ferryIdle for the ratios). They run with onboarding
// or idle.
func argoFleetSteps(cfg *Config, n int, poll time.Duration, ferryFleet **fleet, ferryOnboard, ferryIdle **Section) []step {
	var af *argoFleet
	_, _, longest := argoResync(poll)
	watch := max(cfg.IdleWindow, 2*longest+longest/5)
	at := "at its default resync"
	if poll != ferryDefaultPoll {
		at = "resyncing every " + poll.String()
	}
	title, limit := "Onboarding", argoOnboardLimit*cfg.OnboardTimeout+3*time.Minute+time.Duration(n)*20*time.Millisecond
	if cfg.ArgoAdopt {
		// kubectl applied 1,000 apps 8 at a time in under 9 minutes.
		title, limit = "Adoption", limit+time.Duration(n)*time.Second
	}
	return []step{
		{ScenarioOnboarding, fmt.Sprintf("%s, Argo CD: %d apps of %d resources", title, n, cfg.AppResources), limit,
			func(ctx context.Context, e *Env, sec *Section) (err error) {
				af, err = ArgoOnboard(ctx, e, sec, n, poll, *ferryOnboard, *ferryFleet)
				return err
			}, ScenarioIdle},
		{ScenarioIdle, fmt.Sprintf("Idle cost, Argo CD: %d apps %s", n, at), longest + watch + 3*time.Minute,
			func(ctx context.Context, e *Env, sec *Section) error {
				return ArgoIdle(ctx, e, sec, af, *ferryIdle)
			}, ""},
	}
}
