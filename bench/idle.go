package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

const (
	// procInterval is how often the idle scenario samples CPU and memory.
	procInterval = 5 * time.Second
	// apiInterval is how often it scrapes the API server and the worker's
	// reconcile counter.
	apiInterval = 15 * time.Second
)

// Idle watches an onboarded fleet reconcile on its poll timer with nothing
// changing, for IdleWindow, and reports what that costs: the worker's CPU
// and memory (and Temporal's and the API server's CPU), history events per
// reconcile, ls-remote calls per repo per poll interval, and API server
// requests per reconcile.
func Idle(ctx context.Context, e *Env, sec *Section, f *fleet) error {
	cfg := e.Cfg
	// The fleet is what the onboarding got Synced and Healthy: all of it, or
	// as much as its time limit allowed.
	planned, n := len(f.apps), len(f.synced)
	// Let the onboarding's last syncs and the first polls pass.
	e.logf("idle: settling for %s", f.poll)
	sleep(ctx, f.poll)

	procs := map[string]int{"worker": f.worker.Pid(), "apiserver": e.Stack.Pids()[f.region+"-apiserver"]}
	temporalIs, tprocs := e.temporalProcs()
	var temporalProcs []string
	for name, pid := range tprocs {
		procs[name] = pid
		temporalProcs = append(temporalProcs, name)
	}
	var mu sync.Mutex
	start := map[string]runLength{}
	if err := e.forApps(ctx, f.synced, func(ctx context.Context, name string) error {
		rl, err := e.runLength(ctx, name)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		start[name] = rl
		return nil
	}); err != nil {
		return err
	}

	cpu := map[string][]float64{}
	var rss []float64
	prev, err := sampleProcs(procs)
	if err != nil {
		return err
	}
	rec0, err := f.worker.Metric("ferry_app_reconcile_total")
	if err != nil {
		return err
	}
	api0, err := e.apiRequests(ctx, f.region)
	if err != nil {
		return err
	}
	git0, log0, lat0 := e.gitLogOffset(), f.worker.logOffset(), f.worker.taskLatency()
	began := time.Now()

	var perReconcileApp, perReconcileAll []float64
	recPrev, apiPrev, apiAt := rec0, api0, began
	// The window holds two polls of every app at least, so that each app
	// shows a whole cycle from one poll to the next.
	watch := max(cfg.IdleWindow, 2*f.poll+f.poll/5)
	for time.Since(began) < watch {
		sleep(ctx, procInterval)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := f.worker.Exited(); err != nil {
			return err
		}
		temporal := 0.0
		for name, pid := range procs {
			s, err := SampleTree(pid)
			if err != nil {
				return err
			}
			c := CPUCores(prev[name], s)
			cpu[name] = append(cpu[name], c)
			prev[name] = s
			if name == "worker" {
				rss = append(rss, float64(s.RSS)/(1<<20))
			}
			if slices.Contains(temporalProcs, name) {
				temporal += c
			}
		}
		cpu["temporal-all"] = append(cpu["temporal-all"], temporal)
		cpu["ferry"] = append(cpu["ferry"], temporal+cpu["worker"][len(cpu["worker"])-1])
		if time.Since(apiAt) >= apiInterval-time.Second {
			rec, err := f.worker.Metric("ferry_app_reconcile_total")
			if err != nil {
				return err
			}
			api, err := e.apiRequests(ctx, f.region)
			if err != nil {
				return err
			}
			secs := time.Since(apiAt).Seconds()
			if d := rec - recPrev; d > 0 {
				delta := api.sub(apiPrev)
				perReconcileApp = append(perReconcileApp, (delta.total(isAppKind)-f.backgroundApp*secs)/d)
				perReconcileAll = append(perReconcileAll, (delta.total(nil)-f.backgroundAll*secs)/d)
			}
			recPrev, apiPrev, apiAt = rec, api, time.Now()
		}
	}
	window := time.Since(began)
	rec1, err := f.worker.Metric("ferry_app_reconcile_total")
	if err != nil {
		return err
	}
	api1, err := e.apiRequests(ctx, f.region)
	if err != nil {
		return err
	}
	git1, log1, lat1 := e.gitLogOffset(), f.worker.logOffset(), f.worker.taskLatency()
	reconciles := rec1 - rec0
	apiDelta := api1.sub(api0)

	// History: every poll cycle of every app in the window, and the
	// events of the window over the reconciles of the window.
	var cycles, periods []float64
	var events int64
	var perApp []int64
	continued := 0
	if err := e.forApps(ctx, f.synced, func(ctx context.Context, name string) error {
		rl, err := e.runLength(ctx, name)
		if err != nil {
			return err
		}
		mu.Lock()
		s := start[name]
		mu.Unlock()
		if rl.RunID != s.RunID {
			mu.Lock()
			continued++
			mu.Unlock()
			return nil
		}
		c, err := e.reconcileCycles(ctx, name, s.RunID, s.Events)
		if err != nil {
			return err
		}
		mu.Lock()
		for _, cy := range c {
			cycles = append(cycles, float64(cy.Events))
			periods = append(periods, cy.Period)
		}
		events += rl.Events - s.Events
		perApp = append(perApp, rl.Events-s.Events)
		mu.Unlock()
		return nil
	}); err != nil {
		return err
	}

	git, err := e.gitRequestsBetween(git0, git1)
	if err != nil {
		return err
	}
	intervals := window.Seconds() / f.poll.Seconds()
	var lsPerRepo []float64
	fetches := 0
	for _, r := range f.repos {
		lsPerRepo = append(lsPerRepo, float64(git.LsRemote[r.Name])/intervals)
		fetches += git.Fetch[r.Name]
	}

	tag := fmt.Sprintf("idle-%d", planned)
	repro := cfg.reproduce(ScenarioIdle, fmt.Sprintf("-apps %d -app-resources %d -idle-poll %d:%s -idle-window %s", planned, cfg.AppResources, planned, f.poll, cfg.IdleWindow))
	fig := func(id, title, unit, what string, samples []float64) *Figure {
		f := &Figure{ID: tag + "-" + id, Title: fmt.Sprintf("Idle %d apps: %s", n, title), Unit: unit, Samples: samples, Reproduce: repro, What: what}
		sec.Figures = append(sec.Figures, f)
		return f
	}
	ps := Summarize(periods)
	d := idleText{N: n, Planned: planned, PerRepo: appsPerRepo, Mix: resourceMix(cfg.AppResources), Poll: f.poll.String(),
		Window: window.Round(time.Second).String(), ProcInterval: procInterval.String(), APIInterval: apiInterval.String(),
		TemporalIs: temporalIs, Region: f.region, Kinds: appKinds,
		Reconciles: reconciles, ReconcilesPerSec: reconciles / window.Seconds(), Expected: float64(len(f.synced)) * intervals,
		PeriodMedian: ps.Median, PeriodP95: ps.P95, PeriodMax: ps.Max,
		Throttled: f.worker.throttled(log0, log1), Latency: lat1.describeSince(lat0),
		WorkerCPU: Summarize(cpu["worker"]).Median, WorkerMsPerReconcile: Summarize(cpu["worker"]).Mean * window.Seconds() * 1000 / max(reconciles, 1),
		TemporalCPU: Summarize(cpu["temporal-all"]).Median, APIServerCPU: Summarize(cpu["apiserver"]).Median,
		EventsPerReconcile: float64(events) / max(reconciles, 1), Events: events, Continued: continued,
		LsRemote: sumInts(git.LsRemote), Repos: len(f.repos), LsPerRepo: Summarize(lsPerRepo).Median, Fetches: fetches,
		APIApp: (apiDelta.total(isAppKind) - f.backgroundApp*window.Seconds()) / max(reconciles, 1), APIAppDetail: apiDelta.breakdown(max(reconciles, 1)),
		APIAll: (apiDelta.total(nil) - f.backgroundAll*window.Seconds()) / max(reconciles, 1), Background: f.backgroundAll}
	fig("worker-cpu", "worker CPU", "cores", say(d, "what-worker-cpu"), cpu["worker"])
	fig("worker-rss", "worker memory", "MiB", say(d, "what-worker-rss"), rss)
	fig("temporal-cpu", "Temporal server CPU", "cores", say(d, "what-temporal-cpu"), cpu["temporal-all"])
	total := fig("ferry-cpu", "worker + Temporal CPU", "cores", say(d, "what-ferry-cpu"), cpu["ferry"])
	if planned >= 1000 && f.poll >= 180*time.Second {
		total.Goal = goal(goalIdleCPU)
	}
	perCycle := fig("events", "history events per reconcile", "events", say(d, "what-events"), cycles)
	if len(cycles) == 0 {
		perCycle.Note = say(d, "no-cycle")
	}
	// Per app and poll interval: what an app's history grows by while
	// nothing changes, whether its polls are its own timers or the
	// worker's listings of its repository (no event in the app's history).
	perInterval := make([]float64, 0, len(perApp))
	for _, ev := range perApp {
		perInterval = append(perInterval, float64(ev)/intervals)
	}
	fig("events-per-poll", "history events per app per poll interval", "events", say(d, "what-events-per-poll"), perInterval).Goal = goal(goalIdleEvents)
	fig("ls-remote", "ls-remote per repo per poll interval", "calls", say(d, "what-ls-remote"), lsPerRepo)
	fig("api", "API requests per reconcile", "requests", say(d, "what-api"), perReconcileApp)
	sec.Text = say(d, "text")
	f.worker.Stop()
	return nil
}

// idleText is the data of text/idle.md.tmpl.
type idleText struct {
	// N apps of the Planned fleet were Synced and Healthy and watched;
	// Applied, when too few were for the fleet to be idle.
	N, Planned, Applied, PerRepo int
	Mix                          string // resourceMix of the apps' resources
	Poll, Window                 string
	// ProcInterval and APIInterval: how often CPU and the API server were
	// sampled; TemporalIs names Temporal's processes; Region and Kinds
	// what the API requests count.
	ProcInterval, APIInterval, TemporalIs, Region string
	Kinds                                         []string
	// The table: the window's reconciles and those the poll interval
	// alone expects, the time between two polls, the client-side rate
	// limiter's waits, the task queues' waits, CPU, history events
	// (Continued apps left out), Git requests and API requests per
	// reconcile (APIAppDetail by verb; Background subtracted, per second).
	Reconciles, ReconcilesPerSec, Expected float64
	PeriodMedian, PeriodP95, PeriodMax     float64
	Throttled                              int
	Latency                                string
	WorkerCPU, WorkerMsPerReconcile        float64
	TemporalCPU, APIServerCPU              float64
	EventsPerReconcile                     float64
	Events                                 int64
	Continued, LsRemote, Repos, Fetches    int
	LsPerRepo, APIApp, APIAll, Background  float64
	APIAppDetail                           string
}

func (idleText) textFile() string { return "idle" }

// forApps runs fn for every app, eight at a time.
func (e *Env) forApps(ctx context.Context, names []string, fn func(context.Context, string) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, name := range names {
		g.Go(func() error { return fn(gctx, name) })
	}
	return g.Wait()
}

// withDetail appends "(detail)" when there is one.
func withDetail(s, detail string) string {
	if detail == "" {
		return s
	}
	return s + " (" + detail + ")"
}

func sumInts(m map[string]int) int {
	sum := 0
	for _, v := range m {
		sum += v
	}
	return sum
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
