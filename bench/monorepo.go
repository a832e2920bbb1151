package bench

import (
	"context"
	"fmt"
	"path"
	"time"

	"golang.org/x/sync/errgroup"
)

// Monorepo measures what argocd.argoproj.io/manifest-generate-paths spares
// on a monorepo of MonorepoApps apps (one directory each, polling an hour,
// so that only the worker's repository poller brings a commit): for each
// of MonorepoCommits commits that change one app's directory, the renders
// the worker ran and spared, and the seconds from the push until every app
// shows the new commit, Synced. The same fleet runs twice on the same
// repository: annotated "." and without the annotation (every app renders
// every commit, as Argo CD does without it), one after the other, each on
// a worker of its own.
func Monorepo(ctx context.Context, e *Env, sec *Section) error {
	cfg := e.Cfg
	n, region := cfg.MonorepoApps, e.Stack.Regions[0]
	repo, err := e.newRepo(ctx, "monorepo")
	if err != nil {
		return err
	}
	dir := func(i int) string { return path.Join("apps", fmt.Sprintf("svc-%04d", i)) }
	for i := range n {
		if err := repo.write(resourceFiles(dir(i), 2, 0)); err != nil {
			return err
		}
	}
	if _, err := repo.commitAndPush(ctx, "a monorepo"); err != nil {
		return err
	}
	d := monorepoText{Apps: n, Commits: cfg.MonorepoCommits}
	repro := cfg.reproduce(ScenarioMonorepo, fmt.Sprintf("-monorepo-apps %d -monorepo-commits %d", n, cfg.MonorepoCommits))
	rev := 0
	for _, annotated := range []bool{true, false} {
		kind := map[bool]string{true: "paths", false: "plain"}[annotated]
		apps := make([]appSpec, n)
		for i := range apps {
			name := fmt.Sprintf("mono-%s-%04d", kind, i)
			apps[i] = appSpec{Name: name, RepoURL: repo.URL, Path: dir(i), Namespace: name, Regions: []string{region}, Poll: time.Hour}
			if annotated {
				apps[i].Annotations = map[string]string{"argocd.argoproj.io/manifest-generate-paths": "."}
			}
		}
		w, err := e.StartWorker(ctx, "monorepo-"+kind, "--repo-poll-interval", "2s")
		if err != nil {
			return err
		}
		if _, err := e.applyFleet(ctx, apps); err != nil {
			return err
		}
		head, err := repo.git(ctx, "rev-parse", "HEAD")
		if err != nil {
			return err
		}
		if _, err := e.waitFleet(ctx, apps, head, 5*time.Minute); err != nil {
			return fmt.Errorf("onboard the %s fleet: %w", kind, err)
		}
		var renders, spared, seconds []float64
		for c := range cfg.MonorepoCommits {
			rev++
			r0, _ := w.Metric("ferry_render_duration_seconds_count")
			s0, _ := w.Metric("ferry_render_spared_total")
			if err := repo.write(resourceFiles(dir(c*7%n), 2, rev)); err != nil {
				return err
			}
			pushed := time.Now()
			commit, err := repo.commitAndPush(ctx, fmt.Sprintf("change %s", dir(c*7%n)))
			if err != nil {
				return err
			}
			last, err := e.waitFleet(ctx, apps, commit.SHA, 3*time.Minute)
			if err != nil {
				return fmt.Errorf("the %s fleet on commit %d: %w", kind, c+1, err)
			}
			r1, _ := w.Metric("ferry_render_duration_seconds_count")
			s1, _ := w.Metric("ferry_render_spared_total")
			renders, spared, seconds = append(renders, r1-r0), append(spared, s1-s0), append(seconds, last.Sub(pushed).Seconds())
			e.logf("monorepo %s, commit %d: %.0f renders, %.0f spared, every app at it after %.2fs", kind, c+1, r1-r0, s1-s0, last.Sub(pushed).Seconds())
		}
		if err := e.deleteApps(ctx, apps); err != nil {
			return err
		}
		w.Stop()
		d.Kind = kind
		sec.Figures = append(sec.Figures,
			&Figure{ID: "monorepo-renders-" + kind, Title: fmt.Sprintf("Renders per commit to one app of %d, %s", n, say(d, "title")), Unit: "renders",
				Samples: renders, Reproduce: repro, What: say(d, "what-renders")},
			&Figure{ID: "monorepo-latency-" + kind, Title: fmt.Sprintf("Commit to every app of %d at it, %s", n, say(d, "title")), Unit: "s",
				Samples: seconds, Reproduce: repro, What: say(d, "what-latency")})
		if annotated {
			sec.Figures = append(sec.Figures, &Figure{ID: "monorepo-spared", Title: fmt.Sprintf("Renders spared per commit to one app of %d", n),
				Unit: "renders", Samples: spared, Reproduce: repro, What: say(d, "what-spared")})
		}
	}
	sec.Text = say(d, "text")
	return nil
}

// waitFleet waits until every app is Synced at sha, and returns when the
// last one was first seen so.
func (e *Env) waitFleet(ctx context.Context, apps []appSpec, sha string, timeout time.Duration) (time.Time, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last time.Time
	g, gctx := errgroup.WithContext(wctx)
	g.SetLimit(16)
	at := make([]time.Time, len(apps))
	for i, a := range apps {
		g.Go(func() (err error) {
			at[i], _, err = e.waitSynced(gctx, a.Name, sha, a.Regions, false, 250*time.Millisecond)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return last, err
	}
	for _, t := range at {
		if t.After(last) {
			last = t
		}
	}
	return last, nil
}

// deleteApps deletes the apps with their resources, eight at a time.
func (e *Env) deleteApps(ctx context.Context, apps []appSpec) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, a := range apps {
		g.Go(func() error {
			_, err := e.ferry(gctx, "app", "delete", a.Name, "--cascade")
			return err
		})
	}
	return g.Wait()
}

// monorepoText is the data of text/monorepo.md.tmpl.
type monorepoText struct {
	Apps, Commits int
	// Kind is "paths" (annotated) or "plain".
	Kind string
}

func (monorepoText) textFile() string { return "monorepo" }
