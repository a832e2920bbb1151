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
		peer.WriteString(say(applyText{Err: err.Error()}, "flux-not-measured"))
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
			What: say(applyText{Flux: a.data()}, "what-flux")},
		{ID: "apply-ratio-flux", Title: "Apply ratio, Ferry / Flux", Unit: "×", Samples: ratios(ferry, a.samples), Reproduce: repro,
			What: say(applyText{}, "what-flux-ratio")},
	}
}

// data is what Flux's apply measured, for the report's sentences.
func (a *fluxApply) data() fluxApplyText {
	return fluxApplyText{Versions: a.flux.Versions, Limits: a.flux.Limits, ByVerb: a.requests.breakdown(1), Logs: a.flux.Logs(),
		Applied: Summarize(a.applied).Median, Least: max(float64(2*a.repo.N-300), 0) / 50, Requests: a.requests.total(isAppKind),
		Rate: Summarize(a.rate).Mean, Caught: len(a.applied), Runs: len(a.samples)}
}

// text describes Flux's setup and what it sent the API server.
func (a *fluxApply) text() string {
	return say(applyText{Resources: a.repo.N, Flux: a.data()}, "flux")
}
