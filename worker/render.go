package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/activities"
	"github.com/ferry-gitops/ferry/internal/egress"
	"github.com/ferry-gitops/ferry/internal/handover"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/pipeline"
	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sandbox"
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
	// pluginEgress and egress: --plugin-egress, and the rules check()
	// reads from it with the host policy.
	pluginEgress   egressFlag
	egress         *egress.Rules
	sopsAgeKeyFile string
	runsc          string
	runscPlatform  string
}

// newPipeline builds the render pipeline of the worker's flags (Git clone
// cache, chart cache, manifest cache, render sandbox, Loader), with its
// metrics on reg.
func newPipeline(cfg *config, reg prometheus.Registerer) (*pipeline.Pipeline, error) {
	auth, err := gitAuth(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	m := newRenderMetrics(reg)
	info := newSandboxInfo(reg)
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
		return nil, err
	}
	if err := cfg.render.egress.Check(pluginNames(settings.Plugins)); err != nil {
		return nil, err
	}
	if settings.Kustomize, err = kustomizeOptions(cfg.customizations); err != nil {
		return nil, err
	}
	if settings.SOPS, err = loadSOPSKeys(cfg); err != nil {
		return nil, err
	}
	cache := pipeline.Cache{Memory: manifests.DefaultMemoryBytes, TTL: time.Hour, Key: os.Getenv(manifests.EnvCacheKey),
		OnVerifyFailure: m.verifyFailures.Inc}
	if cfg.redisAddr != "" {
		conn, err := cfg.redis.conn(cfg.redisAddr)
		if err != nil {
			return nil, err
		}
		cache.Redis, cache.TTL = &conn, 24*time.Hour
	}
	p, err := pipeline.New(pipeline.Options{
		CacheDir: cfg.cacheDir,
		Auth:     auth,
		Checkout: pipeline.Checkout{MaxFileBytes: int64(cfg.checkoutMaxFile), MaxBytes: int64(cfg.checkoutMaxSize),
			FileFlag: "--checkout-max-file-size", SizeFlag: "--checkout-max-size"},
		Hosts:  cfg.render.hosts,
		Render: settings,
		Sandbox: &pipeline.Sandbox{Mode: cfg.render.sandbox.mode, Runsc: cfg.render.runsc, RunscPlatform: cfg.render.runscPlatform,
			Memory: int64(cfg.render.memory), Pool: cfg.render.pool, Reuse: cfg.render.reuse, PluginDir: cfg.render.pluginDir,
			Egress: cfg.render.egress},
		Cache:          cache,
		ObserveRequest: m.gitRequest,
		Observer:       m,
	})
	if err != nil {
		return nil, err
	}
	info.WithLabelValues(string(p.Renderer.Mode), p.Renderer.Platform).Set(1)
	if sr, ok := p.Renderer.SourceRenderer.(*sandbox.Renderer); ok {
		reg.MustRegister(newSandboxCounts(sr.Counts))
	}
	return p, nil
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

// newSparedRenders counts the renders an app's manifest-generate-paths
// spared (activities.Control.Spared).
func newSparedRenders(reg prometheus.Registerer) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "ferry_render_spared_total",
		Help: "Renders spared because the new commits changed no file under the app's manifest-generate-paths.",
	})
	reg.MustRegister(c)
	return c
}
