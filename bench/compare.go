package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/workflows"
)

// CompareWarm measures the Compare activity of a region, the work of every
// reconcile, on CompareResources resources that are already in sync: the
// manifests come from the warm manifest cache (Redis) and discovery is
// cached, so what is left is asking the API server about each object.
func CompareWarm(ctx context.Context, e *Env, sec *Section) error {
	cfg := e.Cfg
	region := e.Stack.Regions[0]
	repo, err := e.sizedRepo(ctx, cfg.CompareResources)
	if err != nil {
		return err
	}
	repos, err := e.newRepos("compare")
	if err != nil {
		return err
	}
	src := benchSource(repo.URL)
	loader := &manifests.Loader{Repos: repos, Cache: e.redisCache()}
	loaded, err := loader.Load(ctx, repo.URL, repo.Commit.SHA, src)
	if err != nil {
		return err
	}
	acts, err := e.regionActivities(region, loader)
	if err != nil {
		return err
	}
	const name = "compare"
	applyTime, err := timeIt(ctx, func(ctx context.Context) error {
		_, err := acts.Cluster.Apply(ctx, kube.ApplyRequest{App: name, Namespace: name, Objects: loaded.Objects, CreateNamespace: true})
		return err
	})
	if err != nil {
		return fmt.Errorf("apply the %d resources to compare: %w", loaded.Count, err)
	}
	in := workflows.CompareInput{
		Target: workflows.Target{App: name, Source: src, SHA: repo.Commit.SHA, Digest: loaded.Digest},
		Region: region, Namespace: name,
	}
	// The first compare warms discovery; the Deployments roll out meanwhile.
	if _, err := acts.Compare(ctx, in); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)

	var samples []float64
	var requests apiCounts
	synced := 0
	for i := range cfg.CompareRuns {
		before, err := e.apiRequests(ctx, region)
		if err != nil {
			return err
		}
		var res workflows.CompareResult
		d, err := timeIt(ctx, func(ctx context.Context) (err error) {
			res, err = acts.Compare(ctx, in)
			return err
		})
		if err != nil {
			return err
		}
		after, err := e.apiRequests(ctx, region)
		if err != nil {
			return err
		}
		samples = append(samples, d.Seconds())
		requests = after.sub(before)
		synced = 0
		for _, r := range res.Resources {
			if r.Status == app.SyncStatusSynced {
				synced++
			}
		}
		e.logf("compare run %d: %s, %d of %d Synced", i, d.Round(time.Millisecond), synced, len(res.Resources))
	}
	s := Summarize(samples)
	sec.Figures = append(sec.Figures, &Figure{
		ID: fmt.Sprintf("compare-%d", cfg.CompareResources), Title: fmt.Sprintf("Compare %d resources, warm cache", cfg.CompareResources), Unit: "s",
		Samples:   samples,
		Reproduce: cfg.reproduce(ScenarioCompare, fmt.Sprintf("-compare-runs %d -compare-resources %d", cfg.CompareRuns, cfg.CompareResources)),
		What: fmt.Sprintf("Seconds of one region's Compare activity (activities.Region.Compare, called in the benchmark's process with the worker's options) "+
			"on %d resources already applied and in sync, manifests from the warm Redis cache.", cfg.CompareResources),
	})
	sec.Text = fmt.Sprintf("Resources: %s, applied first with kube.Cluster.Apply (%s for all of them, in process), in region %s. "+
		"Each run's result: %d of %d resources Synced. That is %s ms per resource (median), %s API requests per resource to the app's kinds (%s).\n\n"+
		"\"Warm cache\" means the manifest cache and the discovery cache: Compare reads no informer cache yet, it asks the API server about every object "+
		"(a GET, then a server-side dry-run apply to predict what applying would change), eight objects at a time.\n",
		resourceMix(cfg.CompareResources), applyTime.Round(100*time.Millisecond), region, synced, cfg.CompareResources,
		num(s.Median*1000/float64(cfg.CompareResources)), num(requests.total(isAppKind)/float64(cfg.CompareResources)),
		requests.breakdown(float64(cfg.CompareResources)))
	return nil
}
