package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// fluxApplySource is the GitRepository of the apply scenario's repo.
const fluxApplySource = "flux-apply"

// fluxApply is Flux's side of the apply scenario: a GitRepository of the
// same repo, Ready before any run, and one new Kustomization per run.
type fluxApply struct {
	flux    *Flux
	repo    *sizedRepo
	samples []float64
	// requests is what the last run sent the API server for the apps' kinds.
	requests apiCounts
	rate     []float64
	// applied is the time to the health check's start, when a read caught it.
	applied []float64
}

// startFluxApply starts Flux and waits until its GitRepository holds the
// repo's commit as an artifact, so that a run times the apply alone. When
// Flux cannot run it says why in peer and returns nil.
func (e *Env) startFluxApply(ctx context.Context, repo *sizedRepo, peer *strings.Builder) *fluxApply {
	a, err := e.prepareFluxApply(ctx, repo)
	if err != nil {
		if a != nil {
			a.flux.Stop()
		}
		fmt.Fprintf(peer, "**Flux, the second peer, was not measured:** %s\n\n", oneLine(err.Error()))
		return nil
	}
	return a
}

func (e *Env) prepareFluxApply(ctx context.Context, repo *sizedRepo) (*fluxApply, error) {
	f, err := e.StartFlux(ctx, "apply")
	if err != nil {
		return nil, err
	}
	a := &fluxApply{flux: f, repo: repo}
	if err := f.createGitRepository(ctx, fluxApplySource, repo.URL, time.Hour); err != nil {
		return a, err
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	_, err = f.waitReady(wctx, gitRepositoryResource, fluxApplySource, repo.Commit.SHA, 200*time.Millisecond)
	return a, err
}

// run creates namespace ns and a Kustomization of the repo's app/ into
// it, and waits until it is Ready with the commit applied.
func (a *fluxApply) run(ctx context.Context, e *Env, ns string) (time.Duration, error) {
	f := a.flux
	api0, err := e.apiRequests(ctx, f.Region)
	if err != nil {
		return 0, err
	}
	began := time.Now()
	if err := f.ensureNamespace(ctx, ns); err != nil {
		return 0, err
	}
	if err := f.createKustomization(ctx, fluxApp{Name: ns, Source: fluxApplySource, Path: "app", Namespace: ns, Interval: time.Hour}); err != nil {
		return 0, err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	w, err := f.waitReady(wctx, kustomizationResource, ns, a.repo.Commit.SHA, 100*time.Millisecond)
	cancel()
	if err != nil {
		return 0, err
	}
	took := w.Ready.Sub(began)
	if !w.HealthCheck.IsZero() {
		a.applied = append(a.applied, w.HealthCheck.Sub(began).Seconds())
	}
	api1, err := e.apiRequests(ctx, f.Region)
	if err != nil {
		return 0, err
	}
	a.requests = api1.sub(api0)
	a.samples = append(a.samples, took.Seconds())
	a.rate = append(a.rate, a.requests.total(isAppKind)/took.Seconds())
	return took, nil
}

// figures are Flux's time and the ratio Ferry / Flux, pair by pair.
func (a *fluxApply) figures(ferry []float64, resources int, repro string) []*Figure {
	return []*Figure{
		{ID: "apply-flux", Title: fmt.Sprintf("Apply %d resources, Flux", resources), Unit: "s", Samples: a.samples, Reproduce: repro,
			What: fmt.Sprintf("Seconds from creating the namespace and a Kustomization (wait: true) of the same files, its GitRepository already Ready, to the Kustomization Ready=True with the commit applied (%s).", a.flux.Versions)},
		{ID: "apply-ratio-flux", Title: "Apply ratio, Ferry / Flux", Unit: "×", Samples: ratios(ferry, a.samples), Reproduce: repro,
			What: "Ferry's time divided by Flux's of the same run: below 1, Ferry is faster."},
	}
}

// text describes Flux's setup and what it sent the API server.
func (a *fluxApply) text() string {
	return fmt.Sprintf("**Flux, the second peer** (%s, same cluster, same run, taking its turn with Ferry and kubectl): a GitRepository of the same repo, "+
		"Ready with the commit's artifact before the first run (as Ferry's warm-up filled its manifest cache), then per run the namespace and a Kustomization "+
		"of `./app` with `prune: true`, `wait: true`, `targetNamespace`, interval 1 h; the clock runs from the namespace's creation to the first read (every 100 ms) "+
		"of the Kustomization Ready=True with `status.lastAppliedRevision` at the commit. What kustomize-controller does in that time: download the artifact from "+
		"source-controller, `kustomize build`, a server-side apply dry run per object then the apply of what differs (4 at a time, `--concurrent-ssa`), "+
		"then health polled every 5 s (the first poll at once) until the Deployments are Current; "+
		"its health check was seen starting (the apply done) after %s s at the median (%d of %d runs caught it). "+
		"Limits: %s. The apply phase makes at least two requests per object (the dry run, the apply) through that one client, so with the defaults it cannot take less than about "+
		"(2 × %d − 300) / 50 = %s s: **with Flux's defaults much of this figure is that limit**, where Ferry's worker allows 1000 requests/s; "+
		"`-flux-kustomize-args '--kube-api-qps=1000 --kube-api-burst=2000'` gives kustomize-controller the same limits. Its last run sent the API server %s requests for the apps' kinds, "+
		"%s requests/s on average over its runs; by verb: %s. Logs: %s.\n",
		a.flux.Versions, num(Summarize(a.applied).Median), len(a.applied), len(a.samples), a.flux.Limits, a.repo.N, num(max(float64(2*a.repo.N-300), 0)/50),
		num(a.requests.total(isAppKind)), num(Summarize(a.rate).Mean), a.requests.breakdown(1), a.flux.Logs())
}
