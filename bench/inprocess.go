package bench

import (
	"context"
	"time"

	"github.com/ferry-gitops/ferry/activities"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/pipeline"
	"github.com/ferry-gitops/ferry/internal/redisconn"
)

// newPipeline is a render pipeline as a worker builds it (rendering in
// this process, as --render-sandbox none does), with its Git clone cache
// in a fresh directory, as a worker starts with, and cache for its
// manifest cache.
func (e *Env) newPipeline(name string, cache pipeline.Cache) (*pipeline.Pipeline, error) {
	dir, err := e.tempDir("git-cache-" + name)
	if err != nil {
		return nil, err
	}
	return pipeline.New(pipeline.Options{CacheDir: dir, Cache: cache})
}

// regionActivities are a region's activities as a worker registers them,
// called in this process: the worker's code without Temporal around it.
func (e *Env) regionActivities(region string, loader *manifests.Loader) (*activities.Region, error) {
	cfg, err := kube.LoadConfig(e.Stack.Kubeconfig, region)
	if err != nil {
		return nil, err
	}
	cluster, err := kube.NewCluster(cfg)
	if err != nil {
		return nil, err
	}
	return &activities.Region{Name: region, Cluster: cluster, Loader: loader}, nil
}

// clientLimits describes the client-side rate limit a worker's Kubernetes
// client gets from kube.LoadConfig, which a region's activities share.
func (e *Env) clientLimits(region string) string {
	cfg, err := kube.LoadConfig(e.Stack.Kubeconfig, region)
	if err != nil || cfg.QPS <= 0 {
		return ""
	}
	return say(stackText{QPS: float64(cfg.QPS), Burst: cfg.Burst}, "client-limits")
}

// stackText is the data of text/stack.md.tmpl: what the scenarios say of
// the stack they share.
type stackText struct {
	// Cluster: Temporal is a cluster of TemporalProcs, not the dev server.
	Cluster       bool
	TemporalProcs []string
	// QPS and Burst: a worker's Kubernetes client-side rate limit;
	// FluxArgs: the flags kustomize-controller ran with.
	QPS      float64
	Burst    int
	FluxArgs []string
	// Workflow and Activity: the task queues' waits.
	Workflow, Activity taskWait
}

func (stackText) textFile() string { return "stack" }

// redisCache is the manifest cache the workers use: the stack's Redis,
// its entries sealed with their FERRY_CACHE_KEY.
func (e *Env) redisCache() pipeline.Cache {
	return pipeline.Cache{Redis: &redisconn.Options{Addr: e.Stack.RedisAddr}, TTL: time.Hour, Key: e.Stack.CacheKey}
}

// memoryCache is an empty in-process manifest cache, a worker's without
// Redis.
func memoryCache() pipeline.Cache { return pipeline.Cache{Memory: manifests.DefaultMemoryBytes} }

func benchSource(repoURL string) app.Source {
	return app.Source{RepoURL: repoURL, TargetRevision: "main", Path: "app"}
}

// timeIt runs fn and returns how long it took.
func timeIt(ctx context.Context, fn func(context.Context) error) (time.Duration, error) {
	began := time.Now()
	err := fn(ctx)
	return time.Since(began), err
}
