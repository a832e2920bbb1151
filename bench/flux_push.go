package bench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// fluxPush is Flux's side of the push scenario: the same small app in a
// repo of its own, a GitRepository and a Kustomization of it, and the
// latency of every push.
type fluxPush struct {
	flux *Flux
	repo *gitRepo
	name string
	// latency of each push by its number (push 1 is the warm-up).
	latency map[int]float64
	// applied is the time from the notification to the health check's
	// start, when a status read caught it (the apply had finished).
	applied []float64
}

// startFluxPush starts Flux and brings the app to Ready at its first
// commit. Both intervals are an hour, so that only the notification
// starts a reconcile, as Ferry's poll interval of an hour does.
func (e *Env) startFluxPush(ctx context.Context) (*fluxPush, error) {
	f, err := e.StartFlux(ctx, "push")
	if err != nil {
		return nil, err
	}
	p := &fluxPush{flux: f, name: "flux-push-1r", latency: map[int]float64{}}
	if p.repo, err = e.newRepo(ctx, p.name); err != nil {
		return p, err
	}
	if err := p.repo.write(resourceFiles("app", pushResources, 0)); err != nil {
		return p, err
	}
	first, err := p.repo.commitAndPush(ctx, "rev 0")
	if err != nil {
		return p, err
	}
	if err := f.ensureNamespace(ctx, p.name); err != nil {
		return p, err
	}
	if err := f.createGitRepository(ctx, p.name, p.repo.URL, time.Hour); err != nil {
		return p, err
	}
	app := fluxApp{Name: p.name, Source: p.name, Path: "app", Namespace: p.name, Interval: time.Hour}
	if err := f.createKustomization(ctx, app); err != nil {
		return p, err
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	_, err = f.waitReady(wctx, kustomizationResource, p.name, first.SHA, 200*time.Millisecond)
	return p, err
}

// push commits rev i, pushes it, requests a reconcile of the
// GitRepository as `flux reconcile source git` does, and waits until the
// Kustomization is Ready with the pushed commit applied.
func (p *fluxPush) push(ctx context.Context, i int) error {
	c, err := p.repo.pushRev(ctx, i)
	if err != nil {
		return err
	}
	began := time.Now()
	if err := p.flux.requestReconcile(ctx, gitRepositoryResource, p.name); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	w, err := p.flux.waitReady(wctx, kustomizationResource, p.name, c.SHA, statusPoll)
	if err != nil {
		return fmt.Errorf("Flux push %d: %w", i, err)
	}
	p.latency[i] = w.Ready.Sub(began).Seconds()
	if !w.HealthCheck.IsZero() && i > 1 {
		p.applied = append(p.applied, w.HealthCheck.Sub(began).Seconds())
	}
	return nil
}

// samples are the latencies after the warm-up, in push order.
func (p *fluxPush) samples() []float64 {
	var out []float64
	for i := 2; i <= len(p.latency)+1; i++ {
		if v, ok := p.latency[i]; ok {
			out = append(out, v)
		}
	}
	return out
}

// fluxPushText is the data of text/flux_push.md.tmpl.
type fluxPushText struct {
	// Versions, Region, Limits and Logs describe the Flux that ran.
	Versions, Region, Limits, Logs string
	Annotation, StatusPoll         string
	Err                            string // why Flux was not measured
	// Pushes measured, Applied of them caught with the apply done, at a
	// median of AppliedMedian s; HealthCheck s after that to Ready.
	Pushes, Applied            int
	AppliedMedian, HealthCheck float64
}

func (fluxPushText) textFile() string { return "flux_push" }

// text describes Flux's setup for the report.
func (p *fluxPush) text() fluxPushText {
	f := p.flux
	return fluxPushText{Versions: f.Versions, Region: f.Region, Limits: f.Limits, Logs: f.Logs(),
		Annotation: reconcileRequestAnnotation, StatusPoll: statusPoll.String()}
}

// startFluxPeer starts Flux's side of the push scenario and describes it
// in peer; when Flux cannot run it says why there and returns nil, and
// Ferry's pushes go on alone.
func (e *Env) startFluxPeer(ctx context.Context, peer *strings.Builder) *fluxPush {
	p, err := e.startFluxPush(ctx)
	if err != nil {
		if p != nil {
			p.flux.Stop()
		}
		peer.WriteString(say(fluxPushText{Err: err.Error()}, "not-measured"))
		return nil
	}
	var d fluxPushText = p.text()
	peer.WriteString(say(d, "peer"))
	return p
}

// report adds Flux's figure, the ratio against Ferry's refresh signal (each
// Ferry push with the Flux push right after it) and a row of the table;
// it says in peer where Flux's time went, and returns its series for the plot.
func (p *fluxPush) report(sec *Section, table, peer *strings.Builder, ferryRefresh map[int]float64, repro string) Series {
	samples := p.samples()
	var ferry, flux []float64
	for i := 2; i <= len(p.latency); i++ {
		a, okA := ferryRefresh[i]
		b, okB := p.latency[i]
		if okA && okB {
			ferry, flux = append(ferry, a), append(flux, b)
		}
	}
	s, a := Summarize(samples), Summarize(p.applied)
	var d fluxPushText = p.text()
	d.Pushes, d.Applied, d.AppliedMedian, d.HealthCheck = s.N, a.N, a.Median, s.Median-a.Median
	sec.Figures = append(sec.Figures,
		&Figure{ID: "push-1r-flux", Title: "Push to Ready, 1 region, Flux", Unit: "s", Samples: samples, Reproduce: repro,
			What: say(d, "what")},
		&Figure{ID: "push-1r-flux-applied", Title: "Push to applied, 1 region, Flux", Unit: "s", Samples: p.applied, Reproduce: repro,
			What: say(d, "what-applied")},
		&Figure{ID: "push-1r-ratio-flux", Title: "Push ratio, 1 region, Ferry refresh / Flux", Unit: "×", Samples: ratios(ferry, flux), Reproduce: repro,
			What: say(d, "what-ratio")},
	)
	peer.WriteString(say(d, "time-goes"))
	fmt.Fprintf(table, "| %s | %s | %d | %s s | %s s | %s s | %s s | – |\n",
		p.flux.Region, say(d, "notification"), s.N, num(s.Median), num(s.P95), num(s.Min), num(s.Max))
	return Series{Name: "1 region, Flux", Samples: samples}
}
