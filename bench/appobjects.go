package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
)

// Issue 33's goals.
const (
	goalObjectsRatio  = 1.1 // objects to Synced and Healthy / `ferry app apply` to the same
	goalObjectsWrites = 0   // status writes of an idle fleet of objects
)

var issue33 = "issue 33"

// objectSettle is how long a fleet settles after its last app is Synced
// and Healthy before it is watched idle: the last status writes and syncs.
const objectSettle = 30 * time.Second

// synced is the visibility query of the apps Synced and Healthy.
const synced = "FerrySyncStatus = 'Synced' AND FerryHealthStatus = 'Healthy'"

// objectsStep is the objects scenario; Run gives it a stack with a control
// cluster.
func objectsStep(cfg *Config) step {
	timeout := 2*cfg.OnboardTimeout + 2*(cfg.ObjectWindow+objectSettle) + 5*time.Minute + time.Duration(cfg.ObjectApps)*40*time.Millisecond
	title := fmt.Sprintf("Application objects: %d apps by kubectl apply against ferry app apply, and idle", cfg.ObjectApps)
	return step{ScenarioObjects, title, timeout, ObjectsVsApply, ""}
}

// ObjectsVsApply measures issue 33's performance section on a stack with a
// control cluster, one worker watching its namespace: ObjectApps apps
// applied by `ferry app apply -f DIR` to Synced and Healthy, watched idle
// for ObjectWindow, then deleted (--cascade=false); the same apps under
// other names as Application objects in one file, `kubectl apply`'d into
// the control namespace, to every object's status Synced and Healthy, and
// watched idle as long, counting the control API server's status writes.
func ObjectsVsApply(ctx context.Context, e *Env, sec *Section) error {
	cfg, s := e.Cfg, e.Stack
	if s.ControlContext == "" {
		return errors.New("the stack has no control cluster")
	}
	n, region := cfg.ObjectApps, s.Regions[0]
	apps, repos, err := e.fleetRepos(ctx, "", n, 0, region)
	if err != nil {
		return err
	}
	w, err := e.StartWorker(ctx, "objects")
	if err != nil {
		return err
	}
	d := objectsText{N: n, Repos: len(repos), PerRepo: appsPerRepo, Mix: resourceMix(cfg.AppResources), Region: region,
		Context: s.ControlContext, Namespace: s.ControlNamespace, Parallel: applyParallel,
		Window: cfg.ObjectWindow.String(), Settle: objectSettle.String()}
	repro := cfg.reproduce(ScenarioObjects, fmt.Sprintf("-object-apps %d -object-window %s -app-resources %d", n, cfg.ObjectWindow, cfg.AppResources))
	fig := func(id, title, unit, what string, samples ...float64) *Figure {
		f := &Figure{ID: "objects-" + id, Title: fmt.Sprintf("Objects, %d apps: %s", n, title), Unit: unit, Samples: samples, Reproduce: repro, What: what}
		sec.Figures = append(sec.Figures, f)
		return f
	}
	defer func() { sec.Text = say(d, "text") }()

	// `ferry app apply -f DIR`, as the onboarding scenario applies a fleet.
	octx, cancel := context.WithTimeout(ctx, cfg.OnboardTimeout)
	defer cancel()
	e.logf("objects: ferry app apply of %d apps", n)
	began := time.Now()
	applied, err := e.applyFleet(octx, apps)
	d.FerryApplyTook = time.Since(began).Round(100 * time.Millisecond).String()
	if err != nil {
		return fmt.Errorf("ferry app apply: %w", err)
	}
	ferryTook, err := e.waitApps(octx, w, "objects: ferry app apply", synced, len(applied), began)
	if err != nil {
		return err
	}
	ferry := fig("ferry", "`ferry app apply -f DIR` to Synced and Healthy", "s", say(d, "what-ferry"), ferryTook.Seconds())
	sleep(ctx, objectSettle)
	e.logf("objects: the %d apps of ferry app apply idle for %s", n, cfg.ObjectWindow)
	idleFerry, err := e.watchIdle(ctx, w, cfg.ObjectWindow)
	if err != nil {
		return err
	}

	// The apps go, their resources stay (deleting 1,000 namespaces takes
	// minutes): the objects' apps get namespaces of their own.
	e.logf("objects: deleting the %d apps of ferry app apply (--cascade=false)", n)
	keep := false
	if err := e.forApps(ctx, names(apps), func(ctx context.Context, name string) error {
		return ferryclient.Delete(ctx, e.Temporal, name, contract.DeleteRequest{Cascade: &keep})
	}); err != nil {
		return fmt.Errorf("delete the apps of ferry app apply: %w", err)
	}

	// The same apps as Application objects, in one file.
	objects := make([]appSpec, len(apps))
	var file strings.Builder
	for i, a := range apps {
		a.Name = strings.Replace(a.Name, "app-", "obj-", 1)
		a.Namespace, a.ObjectNamespace = a.Name, s.ControlNamespace
		objects[i] = a
		file.WriteString("---\n" + a.yaml())
	}
	dir, err := e.tempDir("objects")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "applications.yaml")
	if err := os.WriteFile(path, []byte(file.String()), 0o644); err != nil {
		return err
	}
	watch, err := e.watchObjects(ctx, s.ControlNamespace)
	if err != nil {
		return err
	}
	defer watch.stop()
	api0, err := e.apiRequests(ctx, s.ControlContext)
	if err != nil {
		return err
	}
	octx, cancel = context.WithTimeout(ctx, cfg.OnboardTimeout)
	defer cancel()
	e.logf("objects: kubectl apply of %d Application objects", n)
	began = time.Now()
	if err := e.kubectl(octx, s.ControlContext, "apply", "-n", s.ControlNamespace, "-f", path); err != nil {
		return err
	}
	d.KubectlTook = time.Since(began).Round(100 * time.Millisecond).String()
	inNamespace := fmt.Sprintf("%s AND %s = '%s'", synced, contract.SearchAppNamespace, s.ControlNamespace)
	visTook, err := e.waitApps(octx, w, "objects: kubectl apply", inNamespace, n, began)
	if err != nil {
		return err
	}
	last, err := watch.waitAll(octx, n)
	if err != nil {
		return err
	}
	api1, err := e.apiRequests(ctx, s.ControlContext)
	if err != nil {
		return err
	}
	watch.stop()
	objectsTook := last.Sub(began)
	d.WritesOnboarding = api1.sub(api0).total(isStatusWrite)
	d.WritesPerApp = d.WritesOnboarding / float64(n)
	obj := fig("kubectl", "`kubectl apply` of one file to every object Synced and Healthy", "s", say(d, "what-objects"), objectsTook.Seconds())
	fig("kubectl-visibility", "`kubectl apply` to every app Synced and Healthy in Temporal", "s", say(d, "what-objects-visibility"), visTook.Seconds())
	fig("ratio", "objects / `ferry app apply`", "×", say(d, "what-ratio"), obj.Samples[0]/ferry.Samples[0]).Goal = &Goal{Max: goalObjectsRatio, Source: issue33}

	sleep(ctx, objectSettle)
	e.logf("objects: the %d Application objects idle for %s", n, cfg.ObjectWindow)
	idleObjects, err := e.watchIdle(ctx, w, cfg.ObjectWindow)
	if err != nil {
		return err
	}
	writes := idleObjects.api.total(isStatusWrite)
	d.AppRequests = idleObjects.api.total(isApplication) - writes
	d.ControlCPU = Summarize(idleObjects.control).Mean
	d.RSSFerry, d.RSSObjects = Summarize(idleFerry.rss).Median, Summarize(idleObjects.rss).Median
	fig("idle-writes", "status writes to the control API server, idle", "writes", say(d, "what-writes"), writes).Goal = &Goal{Max: goalObjectsWrites, Source: issue33}
	fig("idle-worker-ferry", "worker CPU, the apps of `ferry app apply` idle", "cores", say(d, "what-worker-ferry"), idleFerry.worker...)
	fig("idle-worker-objects", "worker CPU, the apps of the objects idle", "cores", say(d, "what-worker-objects"), idleObjects.worker...)
	fig("idle-worker-extra", "worker's extra CPU for the objects, idle", "cores", say(d, "what-extra"),
		Summarize(idleObjects.worker).Mean-Summarize(idleFerry.worker).Mean)
	return nil
}

// objectsText is the data of text/objects.md.tmpl.
type objectsText struct {
	N, Repos, PerRepo, Parallel     int
	Mix, Region, Context, Namespace string
	Window, Settle                  string
	FerryApplyTook, KubectlTook     string
	WritesOnboarding, WritesPerApp  float64
	AppRequests, ControlCPU         float64
	RSSFerry, RSSObjects            float64
}

func (objectsText) textFile() string { return "objects" }

func names(apps []appSpec) []string {
	out := make([]string, len(apps))
	for i, a := range apps {
		out[i] = a.Name
	}
	return out
}

// waitApps waits until want running apps match the visibility query where
// (one count a second) and returns the time since began.
func (e *Env) waitApps(ctx context.Context, w *Worker, what, where string, want int, began time.Time) (time.Duration, error) {
	lastLog := time.Now()
	var count int64 // the last count the visibility store answered
	for {
		c, err := e.countApps(ctx, where)
		if err == nil {
			count = c
		}
		if err == nil && count >= int64(want) {
			return time.Since(began), nil
		}
		if err := w.Exited(); err != nil {
			return 0, err
		}
		if time.Since(lastLog) > 15*time.Second {
			e.logf("%s: %d of %d Synced and Healthy after %s", what, count, want, time.Since(began).Round(time.Second))
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s: %d of %d apps Synced and Healthy after %s: %w", what, count, want, time.Since(began).Round(time.Second), ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// idleWatch is what watchIdle saw: the worker's CPU per procInterval and
// its memory, the control API server's CPU, and the control API server's
// requests over the window.
type idleWatch struct {
	worker, rss, control []float64
	api                  apiCounts
}

// watchIdle samples the worker and the control API server for d.
func (e *Env) watchIdle(ctx context.Context, w *Worker, d time.Duration) (idleWatch, error) {
	var out idleWatch
	ctl := e.Stack.ControlContext
	procs := map[string]int{"worker": w.Pid(), "control": e.Stack.Pids()[ctl+"-apiserver"]}
	prev, err := sampleProcs(procs)
	if err != nil {
		return out, err
	}
	api0, err := e.apiRequests(ctx, ctl)
	if err != nil {
		return out, err
	}
	for began := time.Now(); time.Since(began) < d; {
		sleep(ctx, procInterval)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		if err := w.Exited(); err != nil {
			return out, err
		}
		next, err := sampleProcs(procs)
		if err != nil {
			return out, err
		}
		out.worker = append(out.worker, CPUCores(prev["worker"], next["worker"]))
		out.control = append(out.control, CPUCores(prev["control"], next["control"]))
		out.rss = append(out.rss, float64(next["worker"].RSS)/(1<<20))
		prev = next
	}
	api1, err := e.apiRequests(ctx, ctl)
	if err != nil {
		return out, err
	}
	out.api = api1.sub(api0)
	return out, nil
}
