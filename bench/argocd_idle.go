package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// ArgoIdle watches Argo CD's onboarded fleet resync at its default period
// with nothing changing, for as long as Ferry's idle window of the same
// fleet (two of its longest resyncs at least), and reports what that
// costs beside Ferry's idle section ferryIdle (nil when it did not run):
// CPU and memory of the application controller and the repo server, Git
// ref checks per repo per resync, API requests per reconcile.
func ArgoIdle(ctx context.Context, e *Env, sec *Section, af *argoFleet, ferryIdle *Section) error {
	if af == nil || af.argo == nil || af.synced == 0 {
		return errors.New("argo cd onboarded no app of its fleet")
	}
	if af.synced < len(af.apps)*9/10 {
		// Apps still syncing: the fleet is not idle. That is a measured
		// outcome (the onboarding's figures), not a failure.
		_ = af.argo.cd.Stop()
		sec.Skipped = say(idleText{N: af.synced, Applied: len(af.apps)}, "not-idle")
		return nil
	}
	cfg := e.Cfg
	region, n := e.Stack.Regions[0], len(af.apps)
	resync, mean, longest := argoResync(af.poll)
	e.logf("argo cd idle: settling for %s", longest)
	sleep(ctx, longest)
	defer af.argo.cd.Stop()
	w := &peerWatch{e: e, region: region, procs: af.argo.cd.Pids(), count: af.argo.reconciles, exited: af.argo.cd.Exited}
	window := max(cfg.IdleWindow, 2*longest+longest/5)
	if err := w.run(ctx, window); err != nil {
		return err
	}
	git, err := e.gitRequestsBetween(w.git0, w.git1)
	if err != nil {
		return err
	}
	intervals := w.window.Seconds() / mean.Seconds()
	var lsPerRepo []float64
	fetches := 0
	for _, r := range af.repos {
		lsPerRepo = append(lsPerRepo, float64(git.LsRemote[r.Name])/intervals)
		fetches += git.Fetch[r.Name]
	}
	perApp := w.perReconcile(isAppKind, af.backgroundApp)

	tag := fmt.Sprintf("argocd-idle-%d", n)
	repro := cfg.reproduce(ScenarioIdle, fmt.Sprintf("-apps %d -app-resources %d", n, cfg.AppResources))
	fig := func(id, title, unit, what string, samples []float64) *Figure {
		fg := &Figure{ID: tag + "-" + id, Title: fmt.Sprintf("Idle %d apps, Argo CD: %s", n, title), Unit: unit, Samples: samples, Reproduce: repro, What: what}
		sec.Figures = append(sec.Figures, fg)
		return fg
	}
	d := argoIdleText{Adopted: af.adopt, Version: af.argo.cd.Version, Region: region, N: n, Synced: af.synced, Mix: resourceMix(cfg.AppResources),
		Repos: plural(len(af.repos), "repo"), PerRepo: appsPerRepo, Window: w.window.Round(time.Second).String(), Logs: af.argo.logs(),
		ProcInterval: procInterval.String(), APIInterval: apiInterval.String(), Kinds: appKinds,
		Reconciles: w.reconciles, ReconcilesPerSec: w.reconciles / w.window.Seconds(), Expected: float64(af.synced) * intervals,
		CPU: Summarize(w.cpu).Median, MsPerReconcile: w.msPerReconcile(), APIServerCPU: Summarize(w.apiserverCPU).Median,
		LsRemote: sumInts(git.LsRemote), LsPerRepo: Summarize(lsPerRepo).Median, Fetches: fetches,
		APIApp: Summarize(perApp).Median, APIAppDetail: w.delta.breakdown(max(w.reconciles, 1)),
		APIAll: Summarize(w.perReconcile(nil, af.backgroundAll)).Median, Background: af.backgroundAll,
		Default: resync == 0, Resync: resync.String(), Mean: mean.String(), FerryPoll: af.poll.String()}
	for _, name := range slices.Sorted(maps.Keys(w.cpuOf)) {
		cpu := w.cpuOf[name]
		d.Parts = append(d.Parts, fmt.Sprintf("%s %s cores", name, num(Summarize(cpu).Median)))
	}
	cpu := fig("cpu", "controller + repo server CPU", "cores", say(d, "what-cpu"), w.cpu)
	rss := fig("rss", "controller + repo server memory", "MiB", say(d, "what-rss"), w.rss)
	fig("ls-remote", "Git ref checks per repo per resync", "calls", say(d, "what-ls-remote"), lsPerRepo)
	api := fig("api", "API requests per reconcile", "requests", say(d, "what-api"), perApp)
	ratios := peerIdleRatios(ferryIdle, n, peerRatioText{Peer: "Argo CD", Procs: "the application controller and the repo server",
		Reconcile: "app reconcile"}, tag, repro, cpu, rss, api)
	sec.Figures = append(sec.Figures, ratios...)
	d.Ratios = len(ratios) > 0
	sec.Text = say(d, "text")
	return nil
}

// argoIdleText is the data of text/argocd_idle.md.tmpl.
type argoIdleText struct {
	// The Argo CD that ran, where, and the fleet: N Applications (Synced
	// of them onboarded) in Repos of PerRepo apps, watched for Window.
	Version, Region, Mix, Window, Logs, Repos string
	N, Synced, PerRepo                        int
	// What the figures sampled: every ProcInterval, the API server's
	// requests for Kinds every APIInterval.
	ProcInterval, APIInterval string
	Kinds                     []string
	// The table: reconciles (and those the default resync asks for), CPU
	// (Parts: each process's median), Git and API requests per reconcile
	// (Background subtracted, per second).
	Reconciles, ReconcilesPerSec, Expected float64
	CPU, MsPerReconcile, APIServerCPU      float64
	Parts                                  []string
	LsRemote, Fetches                      int
	LsPerRepo, APIApp, APIAll, Background  float64
	APIAppDetail                           string
	// Ratios: Ferry's idle of the same fleet ran.
	Ratios bool
	// Adopted: the fleet was adopted, not onboarded (argocd_adopt.go).
	Adopted bool
	// Default: Argo CD ran at its default resync beside Ferry at its
	// default poll, FerryPoll; else at Resync, as Ferry's poll. Mean is
	// the mean interval between two reconciles of an app.
	Default                 bool
	Resync, Mean, FerryPoll string
}

func (argoIdleText) textFile() string { return "argocd_idle" }
