package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// appsPerRepo is how many apps of a fleet share a repo: a monorepo of a
// hundred apps, each in its own directory.
const appsPerRepo = 100

// applyParallel is how many apps `ferry app apply -f DIR` applies at once
// when a fleet is onboarded: the command's default.
const applyParallel = 8

// fleet is N apps onboarded on one stack, which the idle scenario watches.
type fleet struct {
	apps    []appSpec
	synced  []string // the apps that reached Synced and Healthy
	applied int      // the apps `ferry app apply` created
	repos   []*gitRepo
	worker  *Worker
	poll    time.Duration
	region  string
	// background is the API server's request rate before any worker ran,
	// per second: all requests, and those to the apps' kinds.
	backgroundAll, backgroundApp float64
}

// Onboard pushes n apps of AppResources resources (appsPerRepo to a repo),
// starts a worker, applies every app with one `ferry app apply -f DIR`
// (applyParallel at a time) and measures the time until every app is Synced and Healthy.
func Onboard(ctx context.Context, e *Env, sec *Section, n int, poll time.Duration) (*fleet, error) {
	cfg := e.Cfg
	f := &fleet{poll: poll, region: e.Stack.Regions[0]}
	var err error
	if f.apps, f.repos, err = e.fleetRepos(ctx, "", n, poll, f.region); err != nil {
		return nil, err
	}

	// The floor first, before any worker runs: kubectl applies the same
	// directories, as many at a time, on the same stack.
	var floor time.Duration
	var floorApp []float64
	if e.Cfg.OnboardFloor && e.Stack.Temporal != devenv.TemporalCluster {
		byURL := map[string]*gitRepo{}
		for _, r := range f.repos {
			byURL[r.URL] = r
		}
		e.logf("onboarding floor: kubectl, %d apps", n)
		var err error
		if floor, floorApp, err = e.onboardFloor(ctx, f.apps, byURL); err != nil {
			return nil, err
		}
		e.logf("onboarding floor: %s", floor.Round(100*time.Millisecond))
		e.dropFloor(ctx, f.region, f.apps)
	}

	// The stack's own traffic (controllers, kwok, leases) before Ferry runs.
	const baseline = 10 * time.Second
	a0, err := e.apiRequests(ctx, f.region)
	if err != nil {
		return nil, err
	}
	time.Sleep(baseline)
	a1, err := e.apiRequests(ctx, f.region)
	if err != nil {
		return nil, err
	}
	bg := a1.sub(a0)
	f.backgroundAll, f.backgroundApp = bg.total(nil)/baseline.Seconds(), bg.total(isAppKind)/baseline.Seconds()

	if f.worker, err = e.StartWorker(ctx, fmt.Sprintf("fleet-%d", n)); err != nil {
		return nil, err
	}
	// On the cluster, a push to an app synced before the fleet is timed
	// while the fleet onboards (onboard_push.go); the count below has it.
	var probe *pushProbe
	var probes int64
	if sec.Scenario == ScenarioOnboardingCluster {
		if probe, err = e.startPushProbe(ctx, f.worker, f.region); err != nil {
			return f, err
		}
		probes = 1
	}
	octx, cancel := context.WithTimeout(ctx, cfg.OnboardTimeout)
	defer cancel()
	e.logf("onboarding %d apps", n)
	log0, lat0, use0 := f.worker.logOffset(), f.worker.taskLatency(), f.worker.sandboxUse()
	cpu0, procs := machineCPU(), trackCPU(2*time.Second)
	defer procs.stop()
	began := time.Now()
	applied, applyErr := e.applyFleet(octx, f.apps)
	appliedIn := time.Since(began)
	f.applied = len(applied)
	e.logf("%d apps applied in %s", len(applied), appliedIn.Round(time.Second))

	// Wait with the visibility store's count, which costs one request.
	const where = "FerrySyncStatus = 'Synced' AND FerryHealthStatus = 'Healthy'"
	lastLog := time.Now()
	for octx.Err() == nil && applyErr == nil {
		count, err := e.countApps(octx, where)
		if err == nil && count >= int64(len(applied))+probes {
			break
		}
		if err == nil {
			probe.pushDuring(ctx, count-probes, n)
		}
		if time.Since(lastLog) > 15*time.Second {
			e.logf("onboarding: %d of %d Synced and Healthy after %s", count, n, time.Since(began).Round(time.Second))
			lastLog = time.Now()
		}
		if err := f.worker.Exited(); err != nil {
			return f, err
		}
		select {
		case <-octx.Done():
		case <-time.After(time.Second):
		}
	}
	waited := time.Since(began)
	spent, busy := procs.stop(), busyCores(cpu0, machineCPU())
	throttled := f.worker.throttled(log0, f.worker.logOffset())
	latency := f.worker.taskLatency().describeSince(lat0)
	sandboxes := f.worker.sandboxUse().since(use0).describe()

	// The apps that got there, from the visibility store (a status query
	// each would wait for the busy worker), then each one's own record from
	// its history: its start to the upsert that first showed it Synced and
	// Healthy.
	lctx, lcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	names, err := e.appNames(lctx, where)
	lcancel()
	if err != nil {
		return f, err
	}
	for _, a := range f.apps {
		if _, ok := applied[a.Name]; ok && slices.Contains(names, a.Name) {
			f.synced = append(f.synced, a.Name)
		}
	}
	slices.Sort(f.synced)
	breakdown, traces, err := e.onboardBreakdown(ctx, f.synced)
	var perApp, events, tasks []float64
	var lastDone time.Time
	for _, tr := range traces {
		perApp, events = append(perApp, tr.Total.Seconds()), append(events, float64(tr.Events))
		tasks = append(tasks, float64(tr.Tasks))
		if done := tr.Start.Add(tr.Total); done.After(lastDone) {
			lastDone = done
		}
	}
	if len(traces) < len(f.synced) {
		lastDone = time.Time{} // not every app traced: the count's time stands
	}
	if err != nil {
		breakdown = say(onboardText{BreakdownErr: err.Error()}, "no-breakdown")
	}
	var gate gateText
	if gate, err = e.gateTasks(ctx); err != nil {
		breakdown += fmt.Sprintf("\n**The onboarding gate's runs could not be read: %s**\n", oneLine(err.Error()))
	} else {
		breakdown += say(gate, "text")
	}

	total := waited.Seconds()
	if !lastDone.IsZero() {
		total = lastDone.Sub(began).Seconds()
	}
	repro := cfg.reproduce(ScenarioOnboarding, fmt.Sprintf("-apps %d -app-resources %d", n, cfg.AppResources))
	switch sec.Scenario {
	case ScenarioOnboardingCluster:
		repro = cfg.reproduce(sec.Scenario, fmt.Sprintf("-cluster-apps %d -app-resources %d", n, cfg.AppResources))
	case scenarioOnboardingForIdle:
		repro = cfg.reproduce(ScenarioIdleCluster, fmt.Sprintf("-cluster-idle-apps %d -app-resources %d -onboard-timeout %s", n, cfg.AppResources, cfg.OnboardTimeout))
	}
	d := onboardText{N: n, Repos: len(f.repos), PerRepo: appsPerRepo, Mix: resourceMix(cfg.AppResources), Resources: cfg.AppResources,
		Region: f.region, Poll: poll.String(), Applied: len(applied), Parallel: applyParallel, ApplyTook: appliedIn.Round(100 * time.Millisecond).String(),
		Synced: len(f.synced), AppsPerSec: float64(len(f.synced)) / total, ResourcesPerSec: float64(len(f.synced)*cfg.AppResources) / total,
		Latency: latency, Throttled: throttled, Sandboxes: sandboxes, Cluster: e.Stack.Temporal == devenv.TemporalCluster, Traced: maxTraced,
		Waited: waited.Round(time.Second).String(), Timeout: cfg.OnboardTimeout.String()}
	all := &Figure{ID: fmt.Sprintf("onboard-%d-all", n), Title: fmt.Sprintf("Onboard %d apps, all Synced and Healthy", n), Unit: "s",
		Reproduce: repro,
		What:      say(d, "what-all")}
	if n >= 1000 {
		all.Goal = goal(goalOnboardAll)
	}
	if len(f.synced) == n {
		all.Samples = []float64{total}
	} else {
		all.Note = say(d, "not-reached")
	}
	sec.Figures = append(sec.Figures, all,
		&Figure{ID: fmt.Sprintf("onboard-%d-app", n), Title: fmt.Sprintf("Onboard %d apps, per app", n), Unit: "s",
			Samples: perApp, Reproduce: repro,
			What: say(d, "what-app")},
		&Figure{ID: fmt.Sprintf("onboard-%d-apply", n), Title: fmt.Sprintf("Onboard %d apps, `ferry app apply` alone", n), Unit: "s",
			Samples: []float64{appliedIn.Seconds()}, Reproduce: repro,
			What: say(d, "what-apply")},
		&Figure{ID: fmt.Sprintf("onboard-%d-events", n), Title: fmt.Sprintf("Onboard %d apps, history events per app", n), Unit: "events",
			Samples: events, Reproduce: repro,
			What: say(d, "what-events")},
		&Figure{ID: fmt.Sprintf("onboard-%d-tasks", n), Title: fmt.Sprintf("Onboard %d apps, workflow tasks per app", n), Unit: "tasks",
			Samples: tasks, Reproduce: repro,
			What: say(d, "what-tasks")},
	)
	if floor > 0 {
		var ratio []float64
		if len(all.Samples) == 1 {
			ratio = []float64{all.Samples[0] / floor.Seconds()}
		}
		sec.Figures = append(sec.Figures,
			&Figure{ID: fmt.Sprintf("onboard-%d-floor", n), Title: fmt.Sprintf("Onboard %d apps, the kubectl floor", n), Unit: "s",
				Samples: []float64{floor.Seconds()}, Reproduce: repro,
				What: say(d, "what-floor")},
			&Figure{ID: fmt.Sprintf("onboard-%d-floor-app", n), Title: fmt.Sprintf("Onboard %d apps, the kubectl floor per app", n), Unit: "s",
				Samples: floorApp, Reproduce: repro, What: say(d, "what-floor-app")},
			&Figure{ID: fmt.Sprintf("onboard-%d-ratio", n), Title: fmt.Sprintf("Onboard %d apps, Ferry / the kubectl floor", n), Unit: "×",
				Samples: ratio, Reproduce: repro, Goal: goal(goalOnboardRatio),
				What: say(d, "what-ratio")},
		)
	}
	if probe != nil {
		sec.Figures = append(sec.Figures, probe.figure(n, repro))
	}
	sec.Text = say(d, "text")
	sec.Text += breakdown
	if n >= 1000 {
		// Beside the goal: what its time leaves each app on these cores.
		sec.Text += onboardCPU(spent, busy, waited.Seconds(), len(f.synced), goalOnboardAll)
	}
	switch {
	case octx.Err() != nil && ctx.Err() == nil:
		// The limit is a measured outcome, not a failure of the benchmark:
		// the figures above say how far the fleet got.
		sec.Text += say(d, "limit-reached")
	case applyErr != nil:
		return f, fmt.Errorf("ferry app apply: %w", applyErr)
	}
	return f, nil
}

// onboardText is the data of text/onboard.md.tmpl.
type onboardText struct {
	N, Repos, PerRepo, Resources, Parallel int
	Mix                                    string // resourceMix of Resources
	Region, Poll, ApplyTook                string
	// Applied and Synced apps; their rates over the whole onboarding.
	Applied, Synced             int
	AppsPerSec, ResourcesPerSec float64
	// Latency describes the task queues' waits; Throttled counts the
	// client-side rate limiter's waits of a second or more.
	Latency   string
	Throttled int
	// Sandboxes says what the render sandboxes did (sandboxUse).
	Sandboxes string
	// Cluster: Temporal is a cluster, not the dev server.
	Cluster bool
	// Traced is how many histories the breakdown reads at most.
	Traced          int
	Waited, Timeout string
	// BreakdownErr says why the histories could not be read.
	BreakdownErr string
}

func (onboardText) textFile() string { return "onboard" }

// applyFleet writes every app's file into one directory and applies them
// all with one `ferry app apply -f DIR`, as a CI job onboarding a fleet
// would. It returns when each app's workflow started, for the apps of the
// fleet that run, even when the apply was cut short.
func (e *Env) applyFleet(ctx context.Context, apps []appSpec) (map[string]time.Time, error) {
	dir, err := e.tempDir("fleet")
	if err != nil {
		return nil, err
	}
	for _, a := range apps {
		if err := os.WriteFile(filepath.Join(dir, a.Name+".yaml"), []byte(a.yaml()), 0o644); err != nil {
			return nil, err
		}
	}
	_, applyErr := e.ferry(ctx, "app", "apply", "-f", dir, "--parallel", strconv.Itoa(applyParallel))
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	// The visibility store may list a start a moment after the server took
	// it: look again until every app is listed, or a while has passed.
	// Other apps may run beside the fleet (the push probe): only the
	// fleet's count.
	out := make(map[string]time.Time, len(apps))
	for deadline := time.Now().Add(20 * time.Second); ; {
		started, err := e.appStartTimes(lctx)
		if err != nil {
			return nil, errors.Join(applyErr, err)
		}
		for _, a := range apps {
			if t, ok := started[a.Name]; ok {
				out[a.Name] = t
			}
		}
		if len(out) >= len(apps) || time.Now().After(deadline) || applyErr != nil {
			break
		}
		sleep(lctx, time.Second)
	}
	return out, applyErr
}

// fleetRepos pushes n apps of AppResources resources, appsPerRepo to a
// repo (one directory each), and returns them as apps PREFIXapp-NNNN
// polling every poll (zero: Ferry's default) into a namespace of their own
// in region. A peer's fleet has a prefix of its own, so that its repos and
// namespaces are not Ferry's.
func (e *Env) fleetRepos(ctx context.Context, prefix string, n int, poll time.Duration, region string) ([]appSpec, []*gitRepo, error) {
	var apps []appSpec
	var repos []*gitRepo
	for r := 0; r*appsPerRepo < n; r++ {
		repo, err := e.newRepo(ctx, fmt.Sprintf("%sfleet-%02d", prefix, r))
		if err != nil {
			return nil, nil, err
		}
		for i := r * appsPerRepo; i < min(n, (r+1)*appsPerRepo); i++ {
			name := fmt.Sprintf("%sapp-%04d", prefix, i)
			if err := repo.write(resourceFiles(path.Join("apps", name), e.Cfg.AppResources, 0)); err != nil {
				return nil, nil, err
			}
			apps = append(apps, appSpec{Name: name, RepoURL: repo.URL, Path: path.Join("apps", name), Namespace: name, Regions: []string{region}, Poll: poll})
		}
		if _, err := repo.commitAndPush(ctx, "apps"); err != nil {
			return nil, nil, err
		}
		repos = append(repos, repo)
	}
	return apps, repos, nil
}
