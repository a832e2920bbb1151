package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/activities"
	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// CompareWarm measures the Compare activity of a region, the work of every
// reconcile, on CompareResources resources that are already in sync, with
// the manifests in the warm manifest cache (Redis) and discovery cached.
// It runs twice: as the worker runs it, with the live cache (informers,
// synced, and the incremental compare cache filled by a first compare), and
// with the live cache off (Region.DisableLiveCache), which asks the API
// server about every object.
func CompareWarm(ctx context.Context, e *Env, sec *Section) error {
	cfg := e.Cfg
	region := e.Stack.Regions[0]
	repo, err := e.sizedRepo(ctx, cfg.CompareResources)
	if err != nil {
		return err
	}
	p, err := e.newPipeline("compare", e.redisCache())
	if err != nil {
		return err
	}
	src := benchSource(repo.URL)
	loader := p.Loader
	loaded, err := loader.Load(ctx, repo.URL, repo.Commit.SHA, src)
	if err != nil {
		return err
	}
	plain, err := e.regionActivities(region, loader)
	if err != nil {
		return err
	}
	plain.DisableLiveCache = true
	const name = "compare"
	applyTime, err := timeIt(ctx, func(ctx context.Context) error {
		_, err := plain.Cluster.Apply(ctx, kube.ApplyRequest{App: name, Namespace: name, Objects: loaded.Objects, CreateNamespace: true})
		return err
	})
	if err != nil {
		return fmt.Errorf("apply the %d resources to compare: %w", loaded.Count, err)
	}
	in := contract.CompareInput{
		Target: contract.Target{App: name, Source: src, SHA: repo.Commit.SHA, Digest: loaded.Digest},
		Region: region, Namespace: name,
	}
	// The Deployments roll out meanwhile; the first compare warms discovery.
	time.Sleep(2 * time.Second)

	var text strings.Builder
	d := compareText{Mix: resourceMix(cfg.CompareResources), Resources: cfg.CompareResources, Applied: applyTime.Round(100 * time.Millisecond).String(),
		Region: region, Limits: e.clientLimits(region)}
	text.WriteString(say(d, "text"))
	defer func() { sec.Text = text.String() }()
	repro := cfg.reproduce(ScenarioCompare, fmt.Sprintf("-compare-runs %d -compare-resources %d", cfg.CompareRuns, cfg.CompareResources))

	measure := func(id, title, what string, acts *activities.Region) error {
		if _, err := acts.Compare(ctx, in); err != nil { // warm-up
			return err
		}
		// regionActivities gives the Region a *kube.Cluster.
		if cluster := acts.Cluster.(*kube.Cluster); cluster.LiveCacheEnabled() {
			if !cluster.WaitSynced(ctx) {
				return fmt.Errorf("the live cache did not sync: %w", ctx.Err())
			}
			if _, err := acts.Compare(ctx, in); err != nil { // fills the compare cache from the informers
				return err
			}
		}
		var samples []float64
		var requests apiCounts
		synced, total := 0, 0
		for i := range cfg.CompareRuns {
			before, err := e.apiRequests(ctx, region)
			if err != nil {
				return err
			}
			var res contract.CompareResult
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
			synced, total = 0, len(res.Resources)
			for _, r := range res.Resources {
				if r.Status == app.SyncStatusSynced {
					synced++
				}
			}
			e.logf("compare %s run %d: %s, %d of %d Synced", id, i, d.Round(time.Millisecond), synced, len(res.Resources))
		}
		s := Summarize(samples)
		perResource := requests.total(isAppKind) / float64(cfg.CompareResources)
		rate := "–"
		if s.Median > 0 {
			rate = num(requests.total(isAppKind) / s.Median)
		}
		perResourceText := withDetail(num(perResource), requests.breakdown(float64(cfg.CompareResources)))
		fmt.Fprintf(&text, "| %s | %s s | %s–%s s | %s | %s | %s | %d of %d |\n", title, num(s.Median), num(s.Min), num(s.Max),
			num(s.Median*1000/float64(cfg.CompareResources)), perResourceText, rate, synced, total)
		sec.Figures = append(sec.Figures, &Figure{
			ID: fmt.Sprintf("compare-%d-%s", cfg.CompareResources, id), Title: fmt.Sprintf("Compare %d resources, %s", cfg.CompareResources, title), Unit: "s",
			Samples: samples, Reproduce: repro,
			What: what,
		})
		return nil
	}

	live, err := e.regionActivities(region, loader)
	if err != nil {
		return err
	}
	if err := measure("live", "live cache", say(d, "what-live"), live); err != nil {
		return err
	}
	return measure("api", "live cache off", say(d, "what-api"), plain)
}

// compareText is the data of text/compare.md.tmpl.
type compareText struct {
	Mix                     string // resourceMix of Resources
	Resources               int
	Applied, Region, Limits string
}

func (compareText) textFile() string { return "compare" }
