// Command ferry-bench runs Ferry's benchmark scenarios on the real local
// stack and writes a Markdown report; `make bench` runs it. See
// bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ferry-gitops/ferry/bench"
)

func main() {
	cfg := bench.DefaultConfig()
	fs := flag.NewFlagSet("ferry-bench", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: ferry-bench [flags] [OUT_DIR]\n\nRuns Ferry's benchmarks on the local stack; writes OUT_DIR/report.md (default %s).\n\n", cfg.Out)
		fs.PrintDefaults()
	}
	out := fs.String("out", cfg.Out, "directory of the report (also the first argument)")
	only := fs.String("only", "", "comma-separated scenarios to run: "+strings.Join(bench.Scenarios, ", ")+" (default: all)")
	binDir := fs.String("bin", envOr("FERRY_BIN", "bin"), "directory of the ferry and ferry-worker binaries (env FERRY_BIN; make build writes bin/)")
	fs.StringVar(&cfg.ToolsBin, "tools", os.Getenv("FERRY_TOOLS_BIN"), "the stack's tools dir (env FERRY_TOOLS_BIN; default: what hack/tools.sh prints)")
	regions := fs.String("regions", strings.Join(cfg.Regions, ","), "regions of the stack of push, fanout, apply, compare and render")
	fs.IntVar(&cfg.Pushes, "pushes", cfg.Pushes, "pushes per notification mode and region count")
	fs.IntVar(&cfg.FanoutRuns, "fanout-runs", cfg.FanoutRuns, "fan-out runs (pairs of one region and three)")
	fs.IntVar(&cfg.FanoutResources, "fanout-resources", cfg.FanoutResources, "resources of the fan-out app")
	fs.IntVar(&cfg.ApplyRuns, "apply-runs", cfg.ApplyRuns, "apply runs (pairs of Ferry and kubectl)")
	fs.IntVar(&cfg.ApplyResources, "apply-resources", cfg.ApplyResources, "resources of the apply scenario")
	fs.IntVar(&cfg.CompareRuns, "compare-runs", cfg.CompareRuns, "compare runs")
	fs.IntVar(&cfg.CompareResources, "compare-resources", cfg.CompareResources, "resources compared (and rendered)")
	fs.IntVar(&cfg.RenderRuns, "render-runs", cfg.RenderRuns, "render runs, cold and warm each")
	fs.IntVar(&cfg.MonorepoApps, "monorepo-apps", cfg.MonorepoApps, "apps of the monorepo scenario's repository")
	fs.IntVar(&cfg.MonorepoCommits, "monorepo-commits", cfg.MonorepoCommits, "commits to one app's directory in the monorepo scenario")
	fs.IntVar(&cfg.SandboxRuns, "sandbox-runs", cfg.SandboxRuns, "sandbox render runs, in-process, warm pool and cold start each")
	apps := fs.String("apps", joinInts(cfg.ScaleApps), "comma-separated fleet sizes of onboarding and idle")
	fs.IntVar(&cfg.AppResources, "app-resources", cfg.AppResources, "resources of each app of a fleet")
	polls := fs.String("idle-poll", joinPolls(cfg.IdlePoll), "poll interval of the idle apps by fleet size, SIZE:INTERVAL,…: a fleet takes the largest size not above its own; a lone INTERVAL serves every fleet")
	fs.DurationVar(&cfg.IdleWindow, "idle-window", cfg.IdleWindow, "how long an idle fleet is watched")
	fs.DurationVar(&cfg.OnboardTimeout, "onboard-timeout", cfg.OnboardTimeout, "how long a fleet may take to onboard")
	clusterApps := fs.String("cluster-apps", joinInts(cfg.ClusterApps), "comma-separated fleet sizes of onboarding-cluster (Ferry on a Temporal cluster)")
	fs.IntVar(&cfg.ClusterIdleApps, "cluster-idle-apps", cfg.ClusterIdleApps, "apps of idle-cluster: onboarded on a Temporal cluster (as many as -onboard-timeout allows), then watched idle")
	fs.DurationVar(&cfg.ClusterIdlePoll, "cluster-idle-poll", cfg.ClusterIdlePoll, "poll interval of the idle-cluster apps")
	fs.IntVar(&cfg.FloorApps, "floor-apps", cfg.FloorApps, "bare workflows of idle-floor and idle-floor-cluster (Temporal's own cost per idle poll)")
	fs.DurationVar(&cfg.FloorPoll, "floor-poll", cfg.FloorPoll, "how often each bare workflow of the idle floor loops")
	fs.IntVar(&cfg.ObjectApps, "object-apps", cfg.ObjectApps, "apps of the objects scenario, applied by ferry app apply and as Application objects")
	fs.DurationVar(&cfg.ObjectWindow, "object-window", cfg.ObjectWindow, "how long each fleet of the objects scenario is watched idle")
	fs.IntVar(&cfg.UIRuns, "ui-runs", cfg.UIRuns, "ui: loads of each page, and status changes each way, measured in Chromium (the applications page holds the largest fleet of -apps)")
	fs.IntVar(&cfg.UIUpdates, "ui-updates", cfg.UIUpdates, "ui: rounds of the fleet syncing a new commit with the applications page open")
	fs.StringVar(&cfg.UIBrowserCPUs, "ui-browser-cpus", "", "ui: run Chromium on these CPUs alone (taskset -c LIST); run make bench itself under taskset -c on the others")
	fs.IntVar(&cfg.UITreeResources, "ui-tree-resources", cfg.UITreeResources, "ui: resources of the app whose tree is measured, spread over the regions")
	fs.BoolVar(&cfg.OnboardFloor, "onboard-floor", cfg.OnboardFloor, "apply each fleet with kubectl first (the floor), on the dev server's stack")
	fluxArgs := fs.String("flux-kustomize-args", "", "more flags for Flux's kustomize-controller, space-separated (like '--kube-api-qps=1000 --kube-api-burst=2000'); default: Flux's defaults")
	fleetPeers := fs.String("fleet-peers", strings.Join(cfg.FleetPeers, ","), "comma-separated peers whose fleets follow Ferry's in onboarding and idle: flux (the smallest fleet's idle cost), argocd (the largest fleet's onboarding and idle cost); empty: none")
	fs.BoolVar(&cfg.ArgoAdopt, "argocd-adopt", false, "Argo CD's fleet of onboarding and idle is adopted, not onboarded: its objects applied first as Argo CD's sync leaves them (client-side apply, its tracking annotation), then its Applications; for Argo CD's idle cost on a machine where its own onboarding takes hours")
	workerArgs := fs.String("worker-args", "", "more flags for every ferry-worker, space-separated; default: none")
	keep := fs.String("keep", "", "on a full run (no -only) that was not interrupted, also keep the report as DIR/<date>-<commit>.md, beside OUT_DIR/kept naming it (make bench: bench/results)")
	quiet := fs.Bool("q", false, "no progress on stderr")
	_ = fs.Parse(os.Args[1:])
	if fs.NArg() > 1 {
		fs.Usage()
		os.Exit(2)
	}
	cfg.Out = *out
	if fs.NArg() == 1 {
		cfg.Out = fs.Arg(0)
	}
	if *only != "" {
		cfg.Only = splitList(*only)
	}
	cfg.Regions = splitList(*regions)
	cfg.FluxKustomizeArgs = strings.Fields(*fluxArgs)
	cfg.FleetPeers = nil
	for _, p := range strings.Split(*fleetPeers, ",") {
		switch p = strings.TrimSpace(p); p {
		case "":
		case bench.PeerFlux, bench.PeerArgoCD:
			cfg.FleetPeers = append(cfg.FleetPeers, p)
		default:
			fmt.Fprintf(os.Stderr, "ferry-bench: -fleet-peers: %q is not a peer: give flux, argocd or both\n", p)
			os.Exit(2)
		}
	}
	cfg.WorkerArgs = strings.Fields(*workerArgs)
	var err error
	if cfg.ScaleApps, err = parseInts(*apps); err != nil {
		fail(fmt.Errorf("-apps: %w", err))
	}
	if cfg.ClusterApps, err = parseInts(*clusterApps); err != nil {
		fail(fmt.Errorf("-cluster-apps: %w", err))
	}
	if cfg.IdlePoll, err = parsePolls(*polls); err != nil {
		fail(fmt.Errorf("-idle-poll: %w", err))
	}
	if cfg.BinDir, err = filepath.Abs(*binDir); err != nil {
		fail(err)
	}
	if !*quiet {
		cfg.Log = os.Stderr
	}
	cfg.Command = "ferry-bench " + strings.Join(os.Args[1:], " ")
	cfg.Commit = commit()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	keptNote := filepath.Join(cfg.Out, "kept")
	if err := os.Remove(keptNote); err != nil && !os.IsNotExist(err) {
		fail(err)
	}
	// Named now: the checkout may move on while the run goes on.
	keepName := resultName(time.Now())
	rep, err := bench.Run(ctx, cfg)
	if rep != nil {
		fmt.Printf("report: %s\n", filepath.Join(cfg.Out, "report.md"))
	}
	// A partial run is not kept: the results are the record of full runs.
	if rep != nil && *keep != "" && len(cfg.Only) == 0 && ctx.Err() == nil {
		file, kerr := rep.Keep(*keep, keepName)
		if kerr == nil {
			kerr = os.WriteFile(keptNote, []byte(file+"\n"), 0o644)
			fmt.Printf("kept: %s\n", file)
		}
		err = errors.Join(err, kerr)
	}
	if err != nil {
		fail(err)
	}
	if failed := rep.Failed(); len(failed) > 0 {
		fail(fmt.Errorf("%d scenarios did not finish (see the report): %s", len(failed), strings.Join(failed, "; ")))
	}
}

// commit names the checkout's commit, and says when the tree has changes
// that are not committed: the binaries were built from those too.
// FERRY_BENCH_COMMIT overrides it (a copy of the tree without .git).
func commit() string {
	if c := os.Getenv("FERRY_BENCH_COMMIT"); c != "" {
		return c
	}
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if dirty() {
		c += " with uncommitted changes"
	}
	return c
}

// resultName names a full run's kept report: the day it started (UTC),
// the short commit of HEAD, and "-dirty" when the tree has changes that are
// not committed (the binaries were built from those too).
func resultName(started time.Time) string {
	name := started.UTC().Format("2006-01-02")
	if c := strings.Fields(os.Getenv("FERRY_BENCH_COMMIT")); len(c) > 0 {
		return name + "-" + c[0]
	}
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return name + "-unknown"
	}
	name += "-" + strings.TrimSpace(string(out))
	if dirty() {
		name += "-dirty"
	}
	return name
}

// dirty tells whether the checkout's tracked files have changes.
func dirty() bool {
	st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return err == nil && len(st) > 0
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ferry-bench:", err)
	os.Exit(1)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// parsePolls reads "100:10s,1000:30s", or "20s" for every size.
func parsePolls(s string) (map[int]time.Duration, error) {
	out := map[int]time.Duration{}
	for _, f := range splitList(s) {
		size, interval, ok := strings.Cut(f, ":")
		if !ok {
			size, interval = "0", f
		}
		n, err := strconv.Atoi(size)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q: want SIZE:INTERVAL, like 100:10s", f)
		}
		d, err := time.ParseDuration(interval)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%q: want SIZE:INTERVAL, like 100:10s", f)
		}
		out[n] = d
	}
	return out, nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func joinPolls(m map[int]time.Duration) string {
	var s []string
	for _, n := range slices.Sorted(maps.Keys(m)) {
		s = append(s, fmt.Sprintf("%d:%s", n, m[n]))
	}
	return strings.Join(s, ",")
}
