package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
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
	fig("worker-cpu", "worker CPU", "cores", fmt.Sprintf("CPU of the ferry-worker process (utime+stime from /proc), per %s interval.", procInterval), cpu["worker"])
	fig("worker-rss", "worker memory", "MiB", fmt.Sprintf("Resident memory of the ferry-worker process (VmRSS), sampled every %s.", procInterval), rss)
	fig("temporal-cpu", "Temporal server CPU", "cores", fmt.Sprintf("CPU of %s, per %s interval.", temporalIs, procInterval), cpu["temporal-all"])
	total := fig("ferry-cpu", "worker + Temporal CPU", "cores", fmt.Sprintf("CPU of the ferry-worker process and %s together, per %s interval.", temporalIs, procInterval), cpu["ferry"])
	if planned >= 1000 && f.poll >= 180*time.Second {
		total.Goal = goal(goalIdleCPU)
	}
	perCycle := fig("events", "history events per reconcile", "events", "Events in an app's history from one poll timer firing to the next: one whole idle reconcile, over every complete cycle of every app in the window. "+
		"An app whose repository the worker polls for it (--repo-poll-interval) has such a cycle only for its safety compare, every --full-compare-interval.", cycles)
	if len(cycles) == 0 {
		perCycle.Note = "no app's poll timer fired twice in the window (with the repo poll, that timer is the safety compare's: a window of two --full-compare-interval measures it); the whole window's events per reconcile are in the section's table"
	}
	// Per app and poll interval: what an app's history grows by while
	// nothing changes, whether its polls are its own timers or the
	// worker's listings of its repository (no event in the app's history).
	perInterval := make([]float64, 0, len(perApp))
	for _, ev := range perApp {
		perInterval = append(perInterval, float64(ev)/intervals)
	}
	fig("events-per-poll", "history events per app per poll interval", "events", fmt.Sprintf("Events in each app's history over the window, divided by the poll intervals (%s) the window holds: "+
		"the history of a no-change reconcile, whether it is the app's own poll or the worker's listing of its repository (--repo-poll-interval), "+
		"which writes nothing to the app's history, with its safety compare every --full-compare-interval.", f.poll), perInterval).Goal = goal(goalIdleEvents)
	fig("ls-remote", "ls-remote per repo per poll interval", "calls", fmt.Sprintf("ls-remote calls (GET info/refs?service=git-upload-pack in the Git server's log) per repo, divided by the poll intervals in the window; one sample per repo of %d apps.", appsPerRepo), lsPerRepo)
	fig("api", "API requests per reconcile", "requests", fmt.Sprintf("Requests to the API server of %s for the apps' kinds (%s; all verbs but WATCH, from apiserver_request_total), less the stack's own rate measured before the worker started, divided by the reconciles (ferry_app_reconcile_total), per %s interval.", f.region, strings.Join(appKinds, ", "), apiInterval), perReconcileApp)

	expected := float64(len(f.synced)) * intervals
	var b strings.Builder
	fleetIs := fmt.Sprintf("the %d apps onboarded just before", n)
	if n < planned {
		fleetIs = fmt.Sprintf("the %d apps (of the %d planned) that the onboarding got Synced and Healthy within its limit; the rest were not applied, or their `ferry app apply` was cut off by the limit", n, planned)
	}
	fmt.Fprintf(&b, "Fleet: %s, each %s, polling every %s plus Ferry's jitter, with nothing changing in Git or in the cluster. "+
		"Watched for %s after a settling poll interval.\n\n", fleetIs, resourceMix(cfg.AppResources), f.poll, window.Round(time.Second))
	fmt.Fprintf(&b, "| measure | value |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| reconciles (ferry_app_reconcile_total) | %.0f, that is %s/s; %.0f expected from the poll interval alone |\n", reconciles, num(reconciles/window.Seconds()), expected)
	ps := Summarize(periods)
	fmt.Fprintf(&b, "| time between two polls of an app (timer fired to timer fired) | median %s s, p95 %s s, max %s s (poll interval %s + jitter up to 10%%, + the reconcile) |\n", num(ps.Median), num(ps.P95), num(ps.Max), f.poll)
	fmt.Fprintf(&b, "| waits of the worker's Kubernetes client-side rate limiter (client-go logs those of 1 s or more) | %d |\n", f.worker.throttled(log0, log1))
	fmt.Fprintf(&b, "| Temporal task queues | %s |\n", lat1.describeSince(lat0))
	fmt.Fprintf(&b, "| worker CPU, median | %s cores (%s ms of CPU per reconcile) |\n", num(Summarize(cpu["worker"]).Median), num(Summarize(cpu["worker"]).Mean*window.Seconds()*1000/max(reconciles, 1)))
	fmt.Fprintf(&b, "| Temporal server CPU, median | %s cores |\n", num(Summarize(cpu["temporal-all"]).Median))
	fmt.Fprintf(&b, "| kube-apiserver CPU, median | %s cores |\n", num(Summarize(cpu["apiserver"]).Median))
	fmt.Fprintf(&b, "| history events per reconcile, whole window | %s (%d events over %.0f reconciles; %d apps continued as new in the window and are left out) |\n",
		num(float64(events)/max(reconciles, 1)), events, reconciles, continued)
	fmt.Fprintf(&b, "| ls-remote calls in the window | %d over %d repos, %s per repo per poll interval; %d fetches |\n", sumInts(git.LsRemote), len(f.repos), num(Summarize(lsPerRepo).Median), fetches)
	fmt.Fprintf(&b, "| API requests per reconcile, apps' kinds | %s |\n",
		withDetail(num((apiDelta.total(isAppKind)-f.backgroundApp*window.Seconds())/max(reconciles, 1)), apiDelta.breakdown(max(reconciles, 1))))
	fmt.Fprintf(&b, "| API requests per reconcile, every kind | %s (the stack's own %s requests/s subtracted) |\n",
		num((apiDelta.total(nil)-f.backgroundAll*window.Seconds())/max(reconciles, 1)), num(f.backgroundAll))
	sec.Text = b.String()
	f.worker.Stop()
	return nil
}

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
