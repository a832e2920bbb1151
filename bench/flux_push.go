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
	if err := p.repo.write(resourceFiles("app", pushResources, i)); err != nil {
		return err
	}
	c, err := p.repo.commitAndPush(ctx, fmt.Sprintf("rev %d", i))
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

// fluxPushText describes Flux's setup for the report.
func fluxPushText(f *Flux) string {
	return fmt.Sprintf("**Flux, the peer** (%s, in the same run, on the same cluster, region %s): the same files in a repo of their own on the same Git server; "+
		"a GitRepository of its main branch and a Kustomization of `./app` with `prune: true`, `wait: true` (health checked before Ready, as Ferry's sync waits for health), "+
		"`targetNamespace` (created beforehand, where Ferry's CreateNamespace creates it), both at an interval of 1 h. "+
		"A Flux push follows every Ferry push of the one-region app, so load drift hits both alike. The notification is what `flux reconcile source git` does, "+
		"the annotation `%s` set on the GitRepository (one PATCH to the API server); the clock starts right before it and stops at the first read of the Kustomization "+
		"(every %s) that shows Ready=True with `status.lastAppliedRevision` naming the pushed SHA. "+
		"Differences to keep in mind: source-controller then clones the commit, packs an artifact and serves it over HTTP, and kustomize-controller, woken by the new artifact, "+
		"downloads it, builds it with kustomize, applies server-side and polls health every 5 s (the first poll at once); "+
		"Ferry's refresh signal goes through Temporal (ls-remote, render from Redis or Git, compare, apply, health from its watch cache). "+
		"Flux's webhook path (notification-controller's Receiver) is not run, so Flux has no webhook row; the ratio pairs Ferry's refresh signal, "+
		"the like-for-like API call, with the Flux push right after it. Limits: %s. Logs: %s.\n\n",
		f.Versions, f.Region, reconcileRequestAnnotation, statusPoll, f.Limits, f.Logs())
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
		fmt.Fprintf(peer, "**Flux, the peer, was not measured:** %s\n\n", oneLine(err.Error()))
		return nil
	}
	peer.WriteString(fluxPushText(p.flux))
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
	sec.Figures = append(sec.Figures,
		&Figure{ID: "push-1r-flux", Title: "Push to Ready, 1 region, Flux", Unit: "s", Samples: samples, Reproduce: repro,
			What: fmt.Sprintf("Seconds from the `%s` annotation on the GitRepository after a push to the Kustomization Ready=True with the pushed commit applied (%s, wait: true).",
				reconcileRequestAnnotation, p.flux.Versions)},
		&Figure{ID: "push-1r-flux-applied", Title: "Push to applied, 1 region, Flux", Unit: "s", Samples: p.applied, Reproduce: repro,
			What: "Seconds from the annotation to the first read of the Kustomization showing its health check running for the pushed commit: the apply was done by then. Ferry's status shows no such moment, so this figure has no ratio; it says how much of Flux's latency is its health check's poll interval."},
		&Figure{ID: "push-1r-ratio-flux", Title: "Push ratio, 1 region, Ferry refresh / Flux", Unit: "×", Samples: ratios(ferry, flux), Reproduce: repro,
			What: "Ferry's refresh-signal latency divided by the latency of the Flux push made right after it, pair by pair: below 1, Ferry is faster."},
	)
	s, a := Summarize(samples), Summarize(p.applied)
	fmt.Fprintf(peer, "Where Flux's time goes: the health check for the pushed commit was seen starting (the apply done) %s s after the notification at the median (%d of %d pushes caught it), "+
		"so the rest, about %s s, is the health check: its first poll comes at once, while the new ReplicaSet is still rolling out on kwok, and the next one 5 s later.\n\n",
		num(a.Median), a.N, s.N, num(s.Median-a.Median))
	fmt.Fprintf(table, "| %s | Flux: `%s` annotation | %d | %s s | %s s | %s s | %s s | – |\n",
		p.flux.Region, reconcileRequestAnnotation, s.N, num(s.Median), num(s.P95), num(s.Min), num(s.Max))
	return Series{Name: "1 region, Flux", Samples: samples}
}
