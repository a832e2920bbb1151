package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// argoApply is Argo CD's side of the apply scenario: an Application per
// run of the same repo, automated, into a new namespace of the first
// region; a run ends when Argo CD shows it Synced and Healthy, as Ferry's
// ends at Synced and Healthy.
type argoApply struct {
	argo    *argo
	repo    *sizedRepo
	samples []float64
}

// startArgoApply starts Argo CD and has it compare an app of the repo
// first (not synced), so that its repo server holds the clone before the
// first run, as Ferry's warm-up fills its manifest cache. When Argo CD
// cannot run it says why in peer and returns nil.
func (e *Env) startArgoApply(ctx context.Context, repo *sizedRepo, peer *strings.Builder) *argoApply {
	a, err := e.prepareArgoApply(ctx, repo)
	if err != nil {
		if a != nil {
			_ = a.argo.cd.Stop()
		}
		peer.WriteString(say(applyText{Err: err.Error()}, "argocd-not-measured"))
		return nil
	}
	return a
}

func (e *Env) prepareArgoApply(ctx context.Context, repo *sizedRepo) (*argoApply, error) {
	ar, err := e.startArgo(ctx, devenv.ArgoCDOptions{Name: "argocd-apply", Resync: time.Hour})
	if err != nil {
		return nil, err
	}
	a := &argoApply{argo: ar, repo: repo}
	warm := argoApp{Name: "argocd-apply-warmup", RepoURL: repo.URL, Path: "app", Namespace: "argocd-apply-warmup", Dest: ar.cd.Home, Manual: true}
	if err := ar.apply(ctx, warm); err != nil {
		return a, err
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	_, err = ar.waitApp(wctx, warm.Name, 200*time.Millisecond, func(s argoStatus) bool { return s.Revision == repo.Commit.SHA })
	return a, err
}

// run creates an automated Application of the repo's app/ into namespace
// ns and waits until Argo CD shows it Synced at the commit and Healthy.
func (a *argoApply) run(ctx context.Context, ns string) (time.Duration, error) {
	began := time.Now()
	if err := a.argo.apply(ctx, argoApp{Name: ns, RepoURL: a.repo.URL, Path: "app", Namespace: ns, Dest: a.argo.cd.Home}); err != nil {
		return 0, err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	at, err := a.argo.waitApp(wctx, ns, 100*time.Millisecond, func(s argoStatus) bool {
		return s.syncedAt(a.repo.Commit.SHA) && s.Health == "Healthy"
	})
	if err != nil {
		return 0, err
	}
	took := at.Sub(began)
	a.samples = append(a.samples, took.Seconds())
	return took, nil
}

// figures are Argo CD's time and the ratio Ferry / Argo CD, pair by pair.
func (a *argoApply) figures(ferry []float64, resources int, repro string) []*Figure {
	return []*Figure{
		{ID: "apply-argocd", Title: fmt.Sprintf("Apply %d resources, Argo CD", resources), Unit: "s", Samples: a.samples, Reproduce: repro,
			What: say(applyText{Argo: a.data()}, "what-argocd")},
		{ID: "apply-ratio-argocd", Title: "Apply ratio, Ferry / Argo CD", Unit: "×", Samples: ratios(ferry, a.samples), Reproduce: repro,
			What: say(applyText{}, "what-argocd-ratio")},
	}
}

func (a *argoApply) data() argoApplyText {
	return argoApplyText{Version: a.argo.cd.Version, Runs: len(a.samples)}
}

// text describes Argo CD's setup.
func (a *argoApply) text() string {
	return say(applyText{Resources: a.repo.N, Region: a.argo.cd.Home, Argo: a.data()}, "argocd")
}
