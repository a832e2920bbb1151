// Command ferry-worker runs Ferry's Temporal workers: the control queue
// (workflows, Git, render) and/or the queues of one or more regions.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"

	"github.com/ferry-gitops/ferry/activities"
	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/clusters"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/notify"
	"github.com/ferry-gitops/ferry/internal/sandbox"
	"github.com/ferry-gitops/ferry/internal/webhook"
	"github.com/ferry-gitops/ferry/workflows"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.RenderArg {
		os.Exit(renderMode())
	}
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "-version") {
		fmt.Println(versionLine())
		return
	}
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferry-worker:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		slog.Error("ferry-worker stopped", "error", err)
		os.Exit(1)
	}
}

// heartbeatThrottle is the longest the SDK holds an activity's heartbeat
// back. Its own bound, 0.8 of the heartbeat timeout, sends one beat per
// 24 s of a sync's 30 s, and that one must reach the server within 6 s: on
// a loaded Temporal a live sync was timed out and redone from the start.
// At most 5 s apart (each call given 5 s by the SDK, and tried again at the
// next beat when it fails), a sync has about five tries in each 30 s, and
// stays alive while one of them gets through.
const heartbeatThrottle = 5 * time.Second

// rpcTimeout bounds each of the worker's calls to Temporal, its retries
// included (the SDK's default is 10 s). An activity's completion is such a
// call: a 5,000-app onboarding on two cores, overloaded, had Temporal stall
// in bursts (every heartbeat of the moment failing) and the worker logged
// completions that failed after 10 s; an activity whose completion is lost
// is timed out and done again, though it had ended (worker's test
// TestCompletionOutlastsAStalledServer). A completion later than the longest
// heartbeat timeout of a region activity (a sync's, 30 s) finds its
// attempt timed out anyway; long polls keep their own deadlines.
const rpcTimeout = 30 * time.Second

// deadlockDetection is how long a workflow's code may run without yielding
// before the SDK fails its task as a deadlock. Its default, 1 s, is a
// wall-clock second: on a machine whose cores are all busy (an onboarding
// of thousands of apps on two) a workflow goroutine waits that long for a
// core, and its task failed and was run again. Workflow code that truly
// blocks is still caught, a few seconds later.
const deadlockDetection = 5 * time.Second

func run(ctx context.Context, cfg *config) error {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	slog.SetDefault(logger)
	registry := prometheus.NewRegistry()
	registry.MustRegister(prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	sdkMetrics, closeMetrics := newMetrics(registry)
	defer closeMetrics()

	tlsConfig, err := cfg.tls.config(cfg.temporalAddress)
	if err != nil {
		return err
	}
	conn := client.ConnectionOptions{TLS: tlsConfig}
	cfg.tuning.connection(&conn)
	c, err := client.DialContext(ctx, client.Options{
		HostPort: cfg.temporalAddress, Namespace: cfg.namespace, Identity: workerIdentity(),
		Logger: sdklog.NewStructuredLogger(logger), MetricsHandler: sdkMetrics,
		ConnectionOptions: conn, RPCTimeout: rpcTimeout,
	})
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s (namespace %s): %w", cfg.temporalAddress, cfg.namespace, err)
	}
	defer c.Close()
	// One cache of projects for every activity of the process.
	projectCache := &ferryclient.ProjectCache{Client: c}

	// Deferred first, so that it runs last: after the sandboxes are gone.
	if orphans, err := sandbox.AdoptOrphans(time.Minute); err != nil {
		slog.Warn("render sandbox: cannot reap the processes of killed sandboxes", "error", err)
	} else {
		defer orphans.Close(30 * time.Second)
	}
	// Only a control worker renders: a worker of regions alone has the
	// control side hand the manifests over (activities.HandOver), and needs
	// no Git, plugins or render sandbox.
	var loader *manifests.Loader
	var repos *gitsource.Repos
	var charts *chartsource.Charts
	var handOver *activities.HandOver
	if cfg.control {
		p, err := newPipeline(cfg, registry)
		if err != nil {
			return err
		}
		// After the workers stopped (deferred later): the pooled sandboxes.
		defer p.Close()
		loader, repos, charts = p.Loader, p.Repos, p.Charts
	} else if handOver, err = newHandOver(c); err != nil {
		return err
	}
	var workers []worker.Worker
	opts := worker.Options{WorkerStopTimeout: cfg.shutdownTimeout, MaxHeartbeatThrottleInterval: heartbeatThrottle,
		DeadlockDetectionTimeout: deadlockDetection}
	cfg.tuning.apply(&opts)
	objects, err := newObjects(cfg, c, opts)
	if err != nil {
		return err
	}
	if objects.worker != nil {
		workers = append(workers, objects.worker)
	}
	if cfg.control {
		notifications, notifySecrets, err := loadNotifications(ctx, cfg)
		if err != nil {
			return err
		}
		appSetControl, err := newAppSetControl(cfg)
		if err != nil {
			return err
		}
		wfCfg := workflows.Config{Regions: cfg.regionsCfg, MaxReconciles: cfg.maxReconciles,
			FullCompareEvery: cfg.fullCompareEvery, FullCompareInterval: cfg.fullCompareInterval, RepoPollInterval: cfg.repoPollInterval,
			UIURL: strings.TrimSuffix(cfg.uiURL, "/"), OnboardConcurrency: cfg.onboardConcurrency,
			OnboardWait: cfg.onboardWait}
		if notifications != nil {
			wfCfg.Notifications = notifications
		}
		wf := workflows.New(wfCfg)
		var sender activities.NotificationSender = (*notify.Config)(nil)
		if notifications != nil {
			sender = notifications
		}
		validate := app.ValidateOptions{Regions: cfg.regionsCfg}
		control := []interface{ Register(worker.Registry) }{
			&activities.Notifications{Config: sender, Secrets: notifySecrets},
			&activities.Control{Repos: repos, Charts: charts, Loader: loader, Validate: validate,
				Projects: &activities.TemporalProjects{Client: c, Cache: projectCache}, Spared: newSparedRenders(registry).Inc},
			&activities.Children{Client: c, Objects: objects.children},
			&activities.Onboarding{Client: c},
			&activities.Projects{Client: c, Cache: projectCache, Regions: cfg.regionsCfg},
			&activities.AppSets{Client: c, Repos: repos, Validate: validate, Clusters: func() []appset.Cluster { return appSetClusters(cfg) },
				SCM: appSetSCM(cfg), Control: appSetControl}}
		// Both control queues run the same workflows and activities: ferry,
		// and ferry-onboard, where new apps take their first sync, with
		// pollers and slots of its own (contract.OnboardTaskQueue).
		for _, queue := range []string{contract.TaskQueue, contract.OnboardTaskQueue} {
			w := worker.New(c, queue, opts)
			wf.Register(w)
			for _, r := range control {
				r.Register(w)
			}
			workers = append(workers, w)
		}
	}
	custom, err := loadCustomizations(cfg.customizations)
	if err != nil {
		return err
	}
	kubeOpts := kube.DefaultOptions()
	if custom != nil {
		kubeOpts.Health.Custom = custom
	}
	// newRegion is a region's activities over its cluster at rc.
	newRegion := func(lifetime context.Context, region string, rc *rest.Config) (*activities.Region, error) {
		excluded := excludedIn(custom, region, cfg.regionsCfg)
		regionOpts := kubeOpts
		regionOpts.Excluded = excluded
		cluster, err := kube.NewClusterWithOptions(rc, regionOpts)
		if err != nil {
			return nil, fmt.Errorf("region %s: %w", region, err)
		}
		return &activities.Region{Name: region, Cluster: cluster, Loader: loader, HandOver: handOver,
			Projects: &activities.TemporalProjects{Client: c, Cache: projectCache}, Regions: cfg.regionsCfg,
			RequireImpersonation: cfg.requireImpersonation, Impersonable: cfg.impersonable(), SystemIgnore: custom.IgnoreAll(),
			Excluded: excluded, Lifetime: lifetime}, nil
	}
	for _, region := range cfg.regions {
		rest, err := regionConfig(cfg, region)
		if err != nil {
			return fmt.Errorf("region %s: %w", region, err)
		}
		regionActivities, err := newRegion(nil, region, rest)
		if err != nil {
			return err
		}
		workers = append(workers, regionWorkers(c, region, opts, func(w worker.Registry) {
			regionActivities.Register(w)
			regionActivities.RegisterHooks(w)
		})...)
	}

	g, ctx := errgroup.WithContext(ctx)
	for _, w := range workers {
		if err := w.Start(); err != nil {
			return fmt.Errorf("start worker: %w", err)
		}
		defer w.Stop()
	}
	handlers := map[string]http.Handler{
		"/metrics": metricsHandler(registry),
		"/healthz": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }),
	}
	if cfg.webhookAddr != "" || cfg.control && cfg.repoPollInterval > 0 {
		receiver, closeReceiver := startReceiver(ctx, g, cfg, c, registry)
		defer closeReceiver()
		switch cfg.webhookAddr {
		case "":
		case cfg.metricsAddr:
			handlers[webhook.Path] = receiver
		default:
			g.Go(func() error { return serveWebhook(ctx, cfg.webhookAddr, receiver) })
		}
		if cfg.control && cfg.repoPollInterval > 0 {
			poller := webhook.NewPoller(receiver, repos, cfg.repoPollInterval)
			g.Go(func() error { poller.Run(ctx); return nil })
			slog.Info("repo poll: listing the apps' repositories", "every", cfg.repoPollInterval)
		}
	}
	if objects.controller != nil {
		g.Go(func() error { objects.controller.Run(ctx); return nil })
	}
	if cfg.readsClusterSecrets() {
		cr := &clusterRegions{cfg: cfg, client: c, opts: opts,
			newRegion: func(life context.Context, cl clusters.Cluster) (*activities.Region, error) {
				return newRegion(life, cl.Region.Name, cl.Config)
			}}
		if objects.controller != nil {
			cr.revalidate = objects.controller.Revalidate
		}
		if err := cr.watch(ctx); err != nil {
			return err
		}
	}
	if cfg.metricsAddr != "" {
		if cfg.control {
			gauge := newAppGauge(c, registry)
			g.Go(func() error { gauge.run(ctx, 15*time.Second); return nil })
		}
		g.Go(func() error { return serveMux(ctx, cfg.metricsAddr, handlers) })
	}
	if cfg.pprofAddr != "" {
		g.Go(func() error {
			if err := serveMux(ctx, cfg.pprofAddr, profileHandlers()); err != nil {
				return fmt.Errorf("--pprof-addr: %w", err)
			}
			return nil
		})
	}
	slog.Info("ferry-worker started", "temporal", cfg.temporalAddress, "control", cfg.control,
		"regions", cfg.regions, "metrics", cfg.metricsAddr, "webhook", cfg.webhookAddr)
	g.Go(func() error { <-ctx.Done(); return nil })
	return g.Wait()
}

// regionConfig is the region's cluster: its context in the kubeconfig, or,
// with no kubeconfig, the cluster the worker's pod runs in.
func regionConfig(cfg *config, region string) (*rest.Config, error) {
	if cfg.kubeconfig == "" {
		return kube.InClusterConfig()
	}
	return kube.LoadConfig(cfg.kubeconfig, cfg.contextOf(region))
}
