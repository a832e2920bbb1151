package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/activities"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/clusters"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// clusterRegions serves the regions of Argo CD's cluster Secrets in the
// control namespace: a region worker per Secret on its queue
// ferry-region-<name>, started when the Secret appears, started again when
// its server or config changes, stopped when it goes, without a restart of
// the process. Every worker that reads the Secrets serves every one of
// their regions: Temporal spreads a queue's activities among its workers.
// The live regions configuration (regions.NewLive) follows the Secrets,
// so that the control side validates destinations and runs the clusters
// generator with them.
type clusterRegions struct {
	cfg    *config
	client client.Client
	opts   worker.Options
	// newRegion is the activities of a region connected with a Secret's
	// rest.Config (the same as a --region worker's, but for its cluster).
	newRegion func(ctx context.Context, c clusters.Cluster) (*activities.Region, error)
	// revalidate, when set, reads again the Application objects found
	// invalid: one may name a region that is now there.
	revalidate func()

	mu      sync.Mutex
	serving map[string]*servedCluster
}

type servedCluster struct {
	digest  string
	workers []worker.Worker
	stop    context.CancelFunc
}

// watch reads the Secrets, serves their regions, and follows them until
// ctx ends; the error is that of the first read.
func (cr *clusterRegions) watch(ctx context.Context) error {
	cs, err := controlClient(cr.cfg, cr.cfg.objects.context)
	if err != nil {
		return fmt.Errorf("cluster Secrets: the control cluster (--control-context %q): %w", cr.cfg.objects.context, err)
	}
	cr.serving = map[string]*servedCluster{}
	context.AfterFunc(ctx, cr.stopAll)
	return clusters.Watch(ctx, cs, cr.cfg.objects.namespace, func(list []clusters.Cluster) { cr.update(ctx, list) })
}

// update makes the served regions those of list.
func (cr *clusterRegions) update(ctx context.Context, list []clusters.Cluster) {
	var accepted []clusters.Cluster
	var rs []regions.Region
	for _, c := range list {
		if slices.Contains(cr.cfg.regions, c.Region.Name) {
			slog.Warn("cluster Secret: its region is this worker's --region already; left out", "secret", c.Secret, "region", c.Region.Name)
			continue
		}
		accepted = append(accepted, c)
		rs = append(rs, c.Region)
	}
	refused := cr.cfg.regionsCfg.SetClusters(rs)
	if cr.revalidate != nil {
		cr.revalidate()
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	keep := map[string]bool{}
	for _, c := range accepted {
		if msg, bad := refused[c.Region.Name]; bad {
			slog.Warn("cluster Secret: not a region", "secret", c.Secret, "problem", msg)
			continue
		}
		if c.Err != nil {
			slog.Warn("cluster Secret: its region cannot be connected to; its apps show why", "secret", c.Secret, "region", c.Region.Name, "error", c.Err)
		}
		keep[c.Region.Name] = true
		if s := cr.serving[c.Region.Name]; s != nil && s.digest == c.Digest {
			continue
		}
		cr.stopLocked(c.Region.Name)
		if err := cr.start(ctx, c); err != nil {
			slog.Error("cluster Secret: cannot serve its region", "secret", c.Secret, "region", c.Region.Name, "error", err)
			continue
		}
		slog.Info("cluster Secret: serving its region", "secret", c.Secret, "region", c.Region.Name, "server", c.Region.Server)
	}
	for name := range cr.serving {
		if !keep[name] {
			cr.stopLocked(name)
			slog.Info("cluster Secret gone: its region is no longer served", "region", name)
		}
	}
	if cr.cfg.control {
		go refreshAppSets(ctx, cr.client)
	}
}

// start runs the region worker of c; with cr.mu held.
func (cr *clusterRegions) start(ctx context.Context, c clusters.Cluster) error {
	life, stop := context.WithCancel(ctx)
	register := (&activities.Unusable{Name: c.Region.Name, Reason: c.Err}).Register
	if c.Err == nil {
		ra, err := cr.newRegion(life, c)
		if err != nil {
			stop()
			return err
		}
		register = func(w worker.Registry) {
			ra.Register(w)
			ra.RegisterHooks(w)
		}
	}
	ws := regionWorkers(cr.client, c.Region.Name, cr.opts, register)
	if err := startAll(ws); err != nil {
		stop()
		return err
	}
	cr.serving[c.Region.Name] = &servedCluster{digest: c.Digest, workers: ws, stop: stop}
	return nil
}

// stopLocked stops the worker of region name, if one runs; with cr.mu held.
func (cr *clusterRegions) stopLocked(name string) {
	if s := cr.serving[name]; s != nil {
		for _, w := range s.workers {
			w.Stop()
		}
		s.stop()
		delete(cr.serving, name)
	}
}

func (cr *clusterRegions) stopAll() {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for name := range cr.serving {
		cr.stopLocked(name)
	}
}

// refreshAppSets runs every set's generators again: a clusters generator
// yields what the Secrets now say, as Argo CD requeues its sets on a
// cluster Secret's change.
func refreshAppSets(ctx context.Context, c client.Client) {
	sets, err := ferryclient.ListAppSets(ctx, c)
	if err != nil {
		slog.Warn("cluster Secrets changed: cannot list the ApplicationSets to refresh", "error", err)
		return
	}
	for _, s := range sets {
		if err := ferryclient.RefreshAppSet(ctx, c, s.Name); err != nil {
			slog.Debug("cluster Secrets changed: refresh an ApplicationSet", "set", s.Name, "error", err)
		}
	}
}
