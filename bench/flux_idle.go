package bench

import (
	"context"
	"fmt"
	"path"
	"time"
)

// PeerIdle runs Flux's idle cost on the stack of a fleet whose Ferry idle
// cost was just measured: n Kustomizations of the same files, appsPerRepo
// to a GitRepository, all at Ferry's poll interval, Ready, then watched
// for IdleWindow with nothing changing. ferryIdle is Ferry's idle section
// of the same fleet size, for the ratios; nil (or without figures) when
// Ferry's idle did not run.
func PeerIdle(ctx context.Context, e *Env, sec *Section, n int, interval time.Duration, ferryIdle *Section) error {
	cfg := e.Cfg
	region := e.Stack.Regions[0]
	// Ferry's worker is stopped by now: what runs besides the stack is Flux.
	bgAll, bgApp, err := e.backgroundRate(ctx, region, 10*time.Second)
	if err != nil {
		return err
	}
	f, err := e.StartFlux(ctx, fmt.Sprintf("idle-%d", n))
	if err != nil {
		return err
	}
	defer f.Stop()
	repos, onboarded, err := e.fluxFleet(ctx, f, n, interval)
	if err != nil {
		return err
	}
	e.logf("peer-idle: %d Kustomizations Ready in %s; settling for %s", n, onboarded.Round(time.Second), interval)
	sleep(ctx, interval)

	src0, err := f.source.reconciles("gitrepository")
	if err != nil {
		return err
	}
	w := &peerWatch{e: e, region: region, exited: f.Exited,
		procs: map[string]int{"source": f.source.pid(), "kustomize": f.kustomize.pid()},
		count: func() (float64, error) { return f.kustomize.reconciles("kustomization") }}
	if err := w.run(ctx, cfg.IdleWindow); err != nil {
		return err
	}
	src1, err := f.source.reconciles("gitrepository")
	if err != nil {
		return err
	}
	git, err := e.gitRequestsBetween(w.git0, w.git1)
	if err != nil {
		return err
	}
	intervals := w.window.Seconds() / interval.Seconds()
	var lsPerRepo []float64
	fetches := 0
	for _, r := range repos {
		lsPerRepo = append(lsPerRepo, float64(git.LsRemote[r.Name])/intervals)
		fetches += git.Fetch[r.Name]
	}
	perApp := w.perReconcile(isAppKind, bgApp)
	perAll := w.perReconcile(nil, bgAll)

	tag := fmt.Sprintf("peer-idle-%d", n)
	repro := cfg.reproduce(ScenarioIdle+","+ScenarioPeerIdle, fmt.Sprintf("-apps %d -app-resources %d -idle-poll %d:%s -idle-window %s", n, cfg.AppResources, n, interval, cfg.IdleWindow))
	fig := func(id, title, unit, what string, samples []float64) *Figure {
		fg := &Figure{ID: tag + "-" + id, Title: fmt.Sprintf("Idle %d apps, Flux: %s", n, title), Unit: unit, Samples: samples, Reproduce: repro, What: what}
		sec.Figures = append(sec.Figures, fg)
		return fg
	}
	d := fluxIdleText{Versions: f.Versions, Region: region, N: n, Namespace: fluxNamespace, Mix: resourceMix(cfg.AppResources),
		Repos: plural(len(repos), "repo"), PerRepo: appsPerRepo, Interval: interval.String(), Jitter: 5,
		Onboarded: onboarded.Round(time.Second).String(), Window: w.window.Round(time.Second).String(), Limits: f.Limits, Logs: f.Logs(),
		ProcInterval: procInterval.String(), APIInterval: apiInterval.String(), Kinds: appKinds,
		Reconciles: w.reconciles, ReconcilesPerSec: w.reconciles / w.window.Seconds(), Expected: float64(n) * intervals,
		SourceReconciles: src1 - src0, CPU: Summarize(w.cpu).Median, MsPerReconcile: w.msPerReconcile(),
		KustomizeCPU: Summarize(w.cpuOf["kustomize"]).Median, APIServerCPU: Summarize(w.apiserverCPU).Median,
		LsRemote: sumInts(git.LsRemote), RepoCount: len(repos), LsPerRepo: Summarize(lsPerRepo).Median, Fetches: fetches,
		APIApp: Summarize(perApp).Median, APIAppDetail: w.delta.breakdown(max(w.reconciles, 1)), APIAll: Summarize(perAll).Median, Background: bgAll,
		Cores: ThisMachine().Cores, Scenario: ScenarioPeerIdle}
	d.Behind = w.reconciles < 0.9*d.Expected
	d.DonePercent = 100 * w.reconciles / d.Expected
	cpu := fig("cpu", "controllers' CPU", "cores", say(d, "what-cpu"), w.cpu)
	rss := fig("rss", "controllers' memory", "MiB", say(d, "what-rss"), w.rss)
	fig("ls-remote", "Git ref checks per repo per poll interval", "calls", say(d, "what-ls-remote"), lsPerRepo)
	api := fig("api", "API requests per reconcile", "requests", say(d, "what-api"), perApp)
	ratios := peerIdleRatios(ferryIdle, n, peerRatioText{Peer: "Flux", Procs: "source-controller and kustomize-controller", Reconcile: "Kustomization reconcile"}, tag, repro, cpu, rss, api)
	sec.Figures = append(sec.Figures, ratios...)
	d.Ratios = len(ratios) > 0
	sec.Text = say(d, "text")
	return nil
}

// fluxIdleText is the data of text/flux_idle.md.tmpl.
type fluxIdleText struct {
	// The Flux that ran, where, and the fleet: N Kustomizations in Repos
	// (PerRepo apps each), at Interval with Flux's Jitter (%), Ready after
	// Onboarded, then watched for Window.
	Versions, Region, Namespace, Mix, Repos string
	N, PerRepo, Jitter                      int
	Interval, Onboarded, Window             string
	Limits, Logs                            string
	// What the figures sampled: every ProcInterval, the API server's
	// requests for Kinds every APIInterval.
	ProcInterval, APIInterval string
	Kinds                     []string
	// The table: reconciles (and those the interval asks for), CPU, Git
	// and API requests per reconcile (Background subtracted, per second).
	Reconciles, ReconcilesPerSec, Expected, SourceReconciles float64
	CPU, MsPerReconcile, KustomizeCPU, APIServerCPU          float64
	LsRemote, RepoCount, Fetches                             int
	LsPerRepo, APIApp, APIAll, Background                    float64
	APIAppDetail                                             string
	// Behind: Flux did fewer than 90 % of the reconciles asked
	// (DonePercent of them) on the machine's Cores.
	Behind      bool
	DonePercent float64
	Cores       int
	// Ratios: Ferry's idle of the same fleet ran (Scenario: how to run it).
	Ratios   bool
	Scenario string
}

func (fluxIdleText) textFile() string { return "flux_idle" }

// fluxFleet pushes n apps' files, appsPerRepo to a repo, creates their
// namespaces, a GitRepository per repo and a Kustomization per app, and
// waits until every Kustomization is Ready at its repo's commit.
func (e *Env) fluxFleet(ctx context.Context, f *Flux, n int, interval time.Duration) ([]*gitRepo, time.Duration, error) {
	cfg := e.Cfg
	var repos []*gitRepo
	var apps []fluxApp
	for r := 0; r*appsPerRepo < n; r++ {
		repo, err := e.newRepo(ctx, fmt.Sprintf("flux-fleet-%02d", r))
		if err != nil {
			return nil, 0, err
		}
		for i := r * appsPerRepo; i < min(n, (r+1)*appsPerRepo); i++ {
			name := fmt.Sprintf("flux-app-%04d", i)
			dir := path.Join("apps", fmt.Sprintf("app-%04d", i))
			if err := repo.write(resourceFiles(dir, cfg.AppResources, 0)); err != nil {
				return nil, 0, err
			}
			apps = append(apps, fluxApp{Name: name, Source: repo.Name, Path: dir, Namespace: name, Interval: interval})
		}
		if _, err := repo.commitAndPush(ctx, "apps"); err != nil {
			return nil, 0, err
		}
		repos = append(repos, repo)
	}
	began := time.Now()
	for _, repo := range repos {
		if err := f.createGitRepository(ctx, repo.Name, repo.URL, interval); err != nil {
			return nil, 0, err
		}
	}
	for _, a := range apps {
		if err := f.ensureNamespace(ctx, a.Namespace); err != nil {
			return nil, 0, err
		}
		if err := f.createKustomization(ctx, a); err != nil {
			return nil, 0, err
		}
	}
	last, ready := time.Now(), map[string]bool{}
	err := poll(ctx, time.Second, cfg.OnboardTimeout, func() (bool, error) {
		err := f.markReady(ctx, "", ready)
		if time.Since(last) > 15*time.Second {
			e.logf("peer-idle: %d of %d Kustomizations Ready after %s", len(ready), n, time.Since(began).Round(time.Second))
			last = time.Now()
		}
		if err := f.Exited(); err != nil {
			return false, err
		}
		return len(ready) >= n, err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("Flux's fleet of %d not Ready: %w", n, err)
	}
	return repos, time.Since(began), nil
}

// backgroundRate is a region's API request rate over d, every kind and the
// apps' kinds, per second.
func (e *Env) backgroundRate(ctx context.Context, region string, d time.Duration) (all, app float64, err error) {
	a0, err := e.apiRequests(ctx, region)
	if err != nil {
		return 0, 0, err
	}
	sleep(ctx, d)
	a1, err := e.apiRequests(ctx, region)
	if err != nil {
		return 0, 0, err
	}
	bg := a1.sub(a0)
	return bg.total(nil) / d.Seconds(), bg.total(isAppKind) / d.Seconds(), nil
}
