package bench

import (
	"context"
	"time"

	"github.com/ferry-gitops/ferry/activities"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
)

// newRepos is a Git clone cache in a fresh directory, as a worker starts
// with.
func (e *Env) newRepos(name string) (*gitsource.Repos, error) {
	dir, err := e.tempDir("git-cache-" + name)
	if err != nil {
		return nil, err
	}
	return gitsource.New(gitsource.DefaultOptions(dir))
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

// redisCache is the manifest cache the workers use: the stack's Redis.
func (e *Env) redisCache() *manifests.Redis { return manifests.NewRedis(e.Stack.RedisAddr, time.Hour) }

func benchSource(repoURL string) app.Source {
	return app.Source{RepoURL: repoURL, TargetRevision: "main", Path: "app"}
}

// timeIt runs fn and returns how long it took.
func timeIt(ctx context.Context, fn func(context.Context) error) (time.Duration, error) {
	began := time.Now()
	err := fn(ctx)
	return time.Since(began), err
}
