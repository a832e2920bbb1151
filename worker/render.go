package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/activities"
	"github.com/ferry-gitops/ferry/internal/handover"

	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/render"
)

// renderFlags configure rendering. The Helm capabilities are part of the
// manifest cache key (render.Renderer.Version); workers sharing a cache
// should have the same ones all the same.
type renderFlags struct {
	allowRemoteBases bool
	// allowHosts and hosts: --render-allow-hosts, and the host policy
	// check() reads from it.
	allowHosts     stringList
	hosts          *netpolicy.Hosts
	kubeVersion    string
	apiVersions    string
	timeout        time.Duration
	sandbox        sandboxFlag
	memory         bytesFlag
	maxObjects     int
	maxSize        bytesFlag
	maxArchiveSize bytesFlag
	pool           int
	reuse          int
	pluginDir      string
	runsc          string
	runscPlatform  string
}

// newLoader builds the Git clone cache, the manifest cache and the loader
// that ties them together, with their metrics on reg.
func newLoader(cfg *config, reg prometheus.Registerer) (*manifests.Loader, *gitsource.Repos, error) {
	auth, err := gitAuth(context.Background(), cfg)
	if err != nil {
		return nil, nil, err
	}
	m := newRenderMetrics(reg)
	opts := gitsource.DefaultOptions(cfg.cacheDir)
	opts.Auth = auth
	opts.Observe = m.gitRequest
	opts.MaxFileBytes, opts.FileFlag = int64(cfg.checkoutMaxFile), "--checkout-max-file-size"
	opts.MaxCheckoutBytes, opts.CheckoutFlag = int64(cfg.checkoutMaxSize), "--checkout-max-size"
	opts.Hosts = cfg.render.hosts
	gitsource.InstallHostPolicy(cfg.render.hosts)
	repos, err := gitsource.New(opts)
	if err != nil {
		return nil, nil, fmt.Errorf("git clone cache in %s: %w", cfg.cacheDir, err)
	}
	var cache manifests.Cache
	if cfg.redisAddr != "" {
		conn, err := cfg.redis.conn(cfg.redisAddr)
		if err != nil {
			return nil, nil, err
		}
		cache = manifests.NewRedisConn(conn, 24*time.Hour)
	} else {
		cache = manifests.NewMemory(256<<20, time.Hour)
	}
	limits := render.DefaultLimits()
	if cfg.render.timeout > 0 {
		limits.Timeout = cfg.render.timeout
	}
	limits.MaxObjects = cfg.render.maxObjects
	limits.MaxRenderedBytes = int64(cfg.render.maxSize)
	limits.MaxArchiveBytes = int64(cfg.render.maxArchiveSize)
	limits.Flags = render.LimitFlags{Timeout: "--render-timeout", Objects: "--render-max-objects", RenderedBytes: "--render-max-size",
		ArchiveBytes: "--render-max-archive-size"}
	settings := &render.Renderer{
		Limits:           limits,
		AllowRemoteBases: cfg.render.allowRemoteBases,
		Capabilities:     render.Capabilities{KubeVersion: cfg.render.kubeVersion, APIVersions: splitList(cfg.render.apiVersions)},
	}
	if settings.Plugins, err = loadPlugins(cfg); err != nil {
		return nil, nil, err
	}
	renderer, err := newSandboxRenderer(cfg, settings, reg)
	if err != nil {
		return nil, nil, err
	}
	sealer, err := newSealer(cfg, m.verifyFailures.Inc)
	if err != nil {
		return nil, nil, err
	}
	// A failure remembered under other limits is not this worker's.
	failureTag := fmt.Sprintf("render %+v memory %d checkout %d/%d", limits, int64(cfg.render.memory), opts.MaxFileBytes, opts.MaxCheckoutBytes)
	charts, err := newCharts(cfg, auth, limits, m)
	if err != nil {
		return nil, nil, err
	}
	return &manifests.Loader{Repos: repos, Charts: charts, Cache: cache, Sealer: sealer, Renderer: renderer, Observer: m, FailureTag: failureTag}, repos, nil
}

// renderMetrics are the Git, cache and render metrics of a worker.
type renderMetrics struct {
	gitRequests *prometheus.CounterVec
	gitDuration *prometheus.HistogramVec
	cache       *prometheus.CounterVec
	renders     *prometheus.HistogramVec
	// verifyFailures counts cache entries that failed to open.
	verifyFailures prometheus.Counter
}

var _ manifests.Observer = (*renderMetrics)(nil)

func newRenderMetrics(reg prometheus.Registerer) *renderMetrics {
	m := &renderMetrics{
		gitRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ferry_git_requests_total", Help: "Network requests for sources by type (Git ls-remote, fetch; helm-index, helm-chart, oci-tags, oci-resolve, oci-pull) and result.",
		}, []string{"type", "result"}),
		gitDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ferry_git_request_duration_seconds", Help: "Duration of network Git requests.",
		}, []string{"type"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ferry_manifest_cache_requests_total", Help: "Manifest loads by result: hit or miss.",
		}, []string{"result"}),
		renders: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ferry_render_duration_seconds", Help: "Duration of renders by tool (Directory, Kustomize, Helm) and result.",
		}, []string{"tool", "result"}),
		verifyFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ferry_manifest_cache_verify_failures_total",
			Help: "Manifest cache entries that failed authentication (forged, corrupt, or sealed with another FERRY_CACHE_KEY) and were rendered again.",
		}),
	}
	reg.MustRegister(m.gitRequests, m.gitDuration, m.cache, m.renders, m.verifyFailures)
	return m
}

func (m *renderMetrics) gitRequest(requestType string, d time.Duration, err error) {
	m.gitRequests.WithLabelValues(requestType, result(err)).Inc()
	m.gitDuration.WithLabelValues(requestType).Observe(d.Seconds())
}

func (m *renderMetrics) Loaded(cacheHit bool) {
	if cacheHit {
		m.cache.WithLabelValues("hit").Inc()
	} else {
		m.cache.WithLabelValues("miss").Inc()
	}
}

func (m *renderMetrics) Rendered(sourceType string, d time.Duration, err error) {
	m.renders.WithLabelValues(sourceType, result(err)).Observe(d.Seconds())
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// newHandOver is how a worker of regions alone gets manifests: handed over
// by the control workers, sealed to a key of this process, and kept in its
// memory by digest.
func newHandOver(c client.Client) (*activities.HandOver, error) {
	keys, err := handover.NewKeys()
	if err != nil {
		return nil, err
	}
	slog.Info("manifests: handed over by the control workers; this worker renders nothing")
	return &activities.HandOver{Client: c, Keys: keys, Cache: manifests.NewMemory(256<<20, time.Hour)}, nil
}
