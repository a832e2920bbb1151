package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/contract"
)

// ApplyVsKubectl syncs ApplyResources resources into a new namespace with
// Ferry, and the same files with `kubectl apply --server-side` into another
// one, Flux's kustomize-controller the same files into a third
// (flux_apply.go) and Argo CD into a fourth (argocd_apply.go), taking
// turns, on the same cluster; all end when the
// Deployments are Available, as Ferry's sync waits for health.
func ApplyVsKubectl(ctx context.Context, e *Env, sec *Section) error {
	cfg := e.Cfg
	region := e.Stack.Regions[0]
	repo, err := e.sizedRepo(ctx, cfg.ApplyResources)
	if err != nil {
		return err
	}
	w, err := e.StartWorker(ctx, "apply")
	if err != nil {
		return err
	}
	defer w.Stop()

	// An app that only compares fills the manifest cache first, so that
	// Ferry's runs do not render (kubectl does not render either).
	warm := appSpec{Name: "apply-warmup", RepoURL: repo.URL, Path: "app", Namespace: "apply-warmup", Regions: []string{region}, Poll: time.Hour, Manual: true}
	if _, err := e.applyApps(ctx, []appSpec{warm}, 1); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	_, _, err = e.waitFor(wctx, warm.Name, "compared", 200*time.Millisecond, func(v *contract.View) bool {
		return v.Status.Sync.Revision == repo.Commit.SHA && len(v.Status.Resources) >= cfg.ApplyResources
	})
	cancel()
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}

	var peer strings.Builder
	var peers []string
	flux := e.startFluxApply(ctx, repo, &peer)
	if flux != nil {
		defer flux.flux.Stop()
		peers = append(peers, "flux")
	}
	argo := e.startArgoApply(ctx, repo, &peer)
	if argo != nil {
		defer func() { _ = argo.argo.cd.Stop() }()
		peers = append(peers, "argocd")
	}
	var ferry, ferryOp, kubectl, kubectlApply, ferryLag, kubectlLag []float64
	deploys := (cfg.ApplyResources + 9) / 10
	var ferryRequests apiCounts
	var ferryRate []float64
	stepSums := map[onboardStep]float64{}
	var stepTotal float64
	for i := range cfg.ApplyRuns {
		for _, side := range takingTurns(i, peers...) {
			ns := fmt.Sprintf("apply-%s-%d", side, i)
			if side == "argocd" {
				took, err := argo.run(ctx, ns)
				if err != nil {
					return err
				}
				e.logf("apply run %d: argocd %s", i, took.Round(time.Millisecond))
				continue
			}
			if side == "flux" {
				took, err := flux.run(ctx, e, ns)
				if err != nil {
					return err
				}
				e.logf("apply run %d: flux %s", i, took.Round(time.Millisecond))
				continue
			}
			if side == "ferry" {
				spec := appSpec{Name: ns, RepoURL: repo.URL, Path: "app", Namespace: ns, Regions: []string{region}, Poll: time.Hour}
				api0, err := e.apiRequests(ctx, region)
				if err != nil {
					return err
				}
				hw, err := e.watchHealth(ctx, region, ns)
				if err != nil {
					return err
				}
				began := time.Now()
				if _, err := e.applyApps(ctx, []appSpec{spec}, 1); err != nil {
					return err
				}
				wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
				at, v, err := e.waitSynced(wctx, ns, repo.Commit.SHA, []string{region}, true, 100*time.Millisecond)
				cancel()
				if err != nil {
					hw.stop()
					return err
				}
				lag, err := healthLag(ctx, []*healthWatch{hw}, deploys, began, at)
				hw.stop()
				if err != nil {
					return fmt.Errorf("ferry's apply run %d: %w", i, err)
				}
				ferryLag = append(ferryLag, lag)
				api1, err := e.apiRequests(ctx, region)
				if err != nil {
					return err
				}
				ferryRequests = api1.sub(api0)
				ferry = append(ferry, at.Sub(began).Seconds())
				ferryRate = append(ferryRate, ferryRequests.total(isAppKind)/at.Sub(began).Seconds())
				if op := v.Status.OperationState; op != nil && op.FinishedAt != nil {
					ferryOp = append(ferryOp, op.FinishedAt.Sub(op.StartedAt).Seconds())
				}
				steps, err := e.windowOf(ctx, ns, began, at)
				if err != nil {
					return err
				}
				for _, s := range steps {
					stepSums[onboardStep(s.Step)] += s.Mean
				}
				stepTotal += at.Sub(began).Seconds()
				e.logf("apply run %d: ferry %s", i, at.Sub(began).Round(time.Millisecond))
				continue
			}
			hw, err := e.watchHealth(ctx, region, ns)
			if err != nil {
				return err
			}
			began := time.Now()
			total, apply, err := e.kubectlApply(ctx, region, ns, repo.Path("app"))
			if err != nil {
				hw.stop()
				return err
			}
			lag, err := healthLag(ctx, []*healthWatch{hw}, deploys, began, time.Now())
			hw.stop()
			if err != nil {
				return fmt.Errorf("kubectl's apply run %d: %w", i, err)
			}
			kubectl, kubectlApply, kubectlLag = append(kubectl, total.Seconds()), append(kubectlApply, apply.Seconds()), append(kubectlLag, lag)
			e.logf("apply run %d: kubectl %s (apply alone %s)", i, total.Round(time.Millisecond), apply.Round(time.Millisecond))
		}
	}

	repro := cfg.reproduce(ScenarioApply, fmt.Sprintf("-apply-runs %d -apply-resources %d", cfg.ApplyRuns, cfg.ApplyResources))
	d := applyText{Mix: resourceMix(cfg.ApplyResources), Resources: cfg.ApplyResources, Region: region, Kubectl: e.kubectlVersion(),
		KubectlApply: Summarize(kubectlApply), FerryOp: Summarize(ferryOp), Requests: ferryRequests.total(isAppKind),
		Rate: Summarize(ferryRate).Mean, Limits: e.clientLimits(region), ByVerb: ferryRequests.breakdown(1),
		Steps: breakdownRows(stepSums, float64(len(ferry)), stepTotal)}
	sec.Figures = append(sec.Figures,
		&Figure{ID: "apply-ferry", Title: fmt.Sprintf("Apply %d resources, Ferry", cfg.ApplyResources), Unit: "s", Samples: ferry, Reproduce: repro,
			What: say(d, "what-ferry")},
		&Figure{ID: "apply-kubectl", Title: fmt.Sprintf("Apply %d resources, kubectl", cfg.ApplyResources), Unit: "s", Samples: kubectl, Reproduce: repro,
			What: say(d, "what-kubectl")},
		&Figure{ID: "apply-ratio", Title: "Apply ratio, Ferry / kubectl", Unit: "×", Samples: ratios(ferry, kubectl), Reproduce: repro,
			What: say(d, "what-ratio")},
		&Figure{ID: "apply-health-lag-ferry", Title: "Health lag after apply, Ferry", Unit: "s", Samples: ferryLag, Reproduce: repro,
			What: say(d, "what-lag-ferry")},
		&Figure{ID: "apply-health-lag-kubectl", Title: "Health lag after apply, kubectl wait", Unit: "s", Samples: kubectlLag, Reproduce: repro,
			What: say(d, "what-lag-kubectl")},
	)
	if flux != nil {
		sec.Figures = append(sec.Figures, flux.figures(ferry, cfg.ApplyResources, repro)...)
		peer.WriteString(flux.text())
	}
	if argo != nil {
		sec.Figures = append(sec.Figures, argo.figures(ferry, cfg.ApplyResources, repro)...)
		peer.WriteString(argo.text())
	}
	sec.Text = say(d, "text")
	sec.Text += "\n" + peer.String()
	return nil
}

// applyText is the data of text/apply.md.tmpl.
type applyText struct {
	Mix                   string // resourceMix of Resources
	Resources             int
	Region, Kubectl       string
	KubectlApply, FerryOp Summary
	// Requests of Ferry's last run for the apps' kinds, and its mean rate
	// over its runs; Limits and ByVerb describe them.
	Requests, Rate float64
	Limits, ByVerb string
	// Steps: where Ferry's runs went, the mean of their histories.
	Steps []breakdownStep
	// Flux is the second peer's, when it ran, and Argo the third's; Err
	// why one did not.
	Flux fluxApplyText
	Argo argoApplyText
	Err  string
}

// argoApplyText is what Argo CD's apply measured.
type argoApplyText struct {
	Version string
	Runs    int
}

// fluxApplyText is what Flux's apply measured, for its paragraph.
type fluxApplyText struct {
	Versions, Limits, ByVerb, Logs string
	// Applied is the median time to its health check's start, seen in
	// Caught of Runs runs; Least is the least time its client's limits
	// allow.
	Applied, Least, Requests, Rate float64
	Caught, Runs                   int
}

func (applyText) textFile() string { return "apply" }

// takingTurns is the order of the sides in run i, Ferry's and kubectl's
// and the peers' that run: it rotates, so that each side goes first as
// often as the others.
func takingTurns(i int, peers ...string) []string {
	sides := append([]string{"ferry", "kubectl"}, peers...)
	k := i % len(sides)
	return slices.Concat(sides[k:], sides[:k])
}

// kubectlApply creates the namespace, applies dir server-side and waits
// for the Deployments; it returns the whole time and the apply's alone.
func (e *Env) kubectlApply(ctx context.Context, region, ns, dir string) (total, apply time.Duration, err error) {
	kubectl := func(args ...string) error {
		cmd := exec.CommandContext(ctx, filepath.Join(e.Stack.ToolsBin, "kubectl"),
			append([]string{"--kubeconfig", e.Stack.Kubeconfig, "--context", region}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, lastLines(string(out), 5))
		}
		return nil
	}
	began := time.Now()
	if err := kubectl("create", "namespace", ns); err != nil {
		return 0, 0, err
	}
	a := time.Now()
	if err := kubectl("apply", "--server-side", "-n", ns, "-f", dir); err != nil {
		return 0, 0, err
	}
	apply = time.Since(a)
	if err := kubectl("wait", "-n", ns, "--for=condition=Available", "deployment", "--all", "--timeout=5m"); err != nil {
		return 0, 0, err
	}
	return time.Since(began), apply, nil
}

// kubectlVersion names the stack's kubectl: hack/tools.sh builds it into
// a directory named after its Kubernetes version (its own version string
// is not stamped).
func (e *Env) kubectlVersion() string {
	real, err := filepath.EvalSymlinks(filepath.Join(e.Stack.ToolsBin, "kubectl"))
	if v := kubeVersion.FindString(real); err == nil && v != "" {
		return "kubectl " + v
	}
	return "kubectl"
}

var kubeVersion = regexp.MustCompile(`v1\.[0-9]+\.[0-9]+`)

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
