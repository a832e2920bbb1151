package bench

import (
	"context"
	"fmt"

	"github.com/ferry-gitops/ferry/internal/manifests"
)

// RenderColdWarm measures what a worker does to get the manifests of a
// commit, through manifests.Loader as the workers call it, three ways:
// cold (a new clone cache and an empty manifest cache: clone over HTTP,
// check out, render, encode), with the clone warm but the manifest cache
// empty (check out, render, encode), and warm (a hit in the Redis manifest
// cache: fetch and decode).
func RenderColdWarm(ctx context.Context, e *Env, sec *Section) error {
	cfg := e.Cfg
	repo, err := e.sizedRepo(ctx, cfg.CompareResources)
	if err != nil {
		return err
	}
	src := benchSource(repo.URL)
	load := func(ctx context.Context, l *manifests.Loader) error {
		loaded, err := l.Load(ctx, repo.URL, repo.Commit.SHA, src)
		if err == nil && loaded.Count != cfg.CompareResources {
			err = fmt.Errorf("rendered %d objects, want %d", loaded.Count, cfg.CompareResources)
		}
		return err
	}

	var cold, gitWarm, warm []float64
	for i := range cfg.RenderRuns {
		p, err := e.newPipeline(fmt.Sprintf("render-%d", i), memoryCache())
		if err != nil {
			return err
		}
		d, err := timeIt(ctx, func(ctx context.Context) error { return load(ctx, p.Loader) })
		if err != nil {
			return err
		}
		cold = append(cold, d.Seconds())
		empty, err := p.LoaderWith(memoryCache())
		if err != nil {
			return err
		}
		d, err = timeIt(ctx, func(ctx context.Context) error { return load(ctx, empty) })
		if err != nil {
			return err
		}
		gitWarm = append(gitWarm, d.Seconds())
		redis, err := p.LoaderWith(e.redisCache())
		if err != nil {
			return err
		}
		if err := load(ctx, redis); err != nil { // fills Redis if nothing did yet
			return err
		}
		d, err = timeIt(ctx, func(ctx context.Context) error { return load(ctx, redis) })
		if err != nil {
			return err
		}
		warm = append(warm, d.Seconds())
		e.logf("render run %d: cold %.3fs, warm clone %.3fs, warm cache %.3fs", i, cold[i], gitWarm[i], warm[i])
	}
	repro := cfg.reproduce(ScenarioRender, fmt.Sprintf("-render-runs %d -compare-resources %d", cfg.RenderRuns, cfg.CompareResources))
	d := renderText{Resources: cfg.CompareResources, Mix: resourceMix(cfg.CompareResources)}
	sec.Figures = append(sec.Figures,
		&Figure{ID: "render-cold", Title: fmt.Sprintf("Render %d resources, cold", cfg.CompareResources), Unit: "s", Samples: cold, Reproduce: repro,
			What: say(d, "what-cold")},
		&Figure{ID: "render-warm-clone", Title: fmt.Sprintf("Render %d resources, warm clone", cfg.CompareResources), Unit: "s", Samples: gitWarm, Reproduce: repro,
			What: say(d, "what-warm-clone")},
		&Figure{ID: "render-warm", Title: fmt.Sprintf("Render %d resources, warm cache", cfg.CompareResources), Unit: "s", Samples: warm, Reproduce: repro,
			What: say(d, "what-warm")},
	)
	sec.Text = say(d, "text")
	return nil
}

// renderText is the data of text/render.md.tmpl.
type renderText struct {
	Resources int
	Mix       string // resourceMix of Resources
}

func (renderText) textFile() string { return "render" }
