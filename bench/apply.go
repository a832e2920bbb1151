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

	"github.com/ferry-gitops/ferry/workflows"
)

// ApplyVsKubectl syncs ApplyResources resources into a new namespace with
// Ferry, and the same files with `kubectl apply --server-side` into another
// one, and Flux's kustomize-controller the same files into a third
// (flux_apply.go), taking turns, on the same cluster; all end when the
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
	_, _, err = e.waitFor(wctx, warm.Name, "compared", 200*time.Millisecond, func(v *workflows.View) bool {
		return v.Status.Sync.Revision == repo.Commit.SHA && len(v.Status.Resources) >= cfg.ApplyResources
	})
	cancel()
	if err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}

	var peer strings.Builder
	flux := e.startFluxApply(ctx, repo, &peer)
	if flux != nil {
		defer flux.flux.Stop()
	}
	var ferry, ferryOp, kubectl, kubectlApply []float64
	var ferryRequests apiCounts
	var ferryRate []float64
	for i := range cfg.ApplyRuns {
		for _, side := range takingTurns(i, flux != nil) {
			ns := fmt.Sprintf("apply-%s-%d", side, i)
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
				began := time.Now()
				if _, err := e.applyApps(ctx, []appSpec{spec}, 1); err != nil {
					return err
				}
				wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
				at, v, err := e.waitSynced(wctx, ns, repo.Commit.SHA, []string{region}, true, 100*time.Millisecond)
				cancel()
				if err != nil {
					return err
				}
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
				e.logf("apply run %d: ferry %s", i, at.Sub(began).Round(time.Millisecond))
				continue
			}
			total, apply, err := e.kubectlApply(ctx, region, ns, repo.Path("app"))
			if err != nil {
				return err
			}
			kubectl, kubectlApply = append(kubectl, total.Seconds()), append(kubectlApply, apply.Seconds())
			e.logf("apply run %d: kubectl %s (apply alone %s)", i, total.Round(time.Millisecond), apply.Round(time.Millisecond))
		}
	}

	repro := cfg.reproduce(ScenarioApply, fmt.Sprintf("-apply-runs %d -apply-resources %d", cfg.ApplyRuns, cfg.ApplyResources))
	sec.Figures = append(sec.Figures,
		&Figure{ID: "apply-ferry", Title: fmt.Sprintf("Apply %d resources, Ferry", cfg.ApplyResources), Unit: "s", Samples: ferry, Reproduce: repro,
			What: "Seconds from `ferry app apply` of a new automated app to Synced and Healthy (its sync waits until the Deployments are Available)."},
		&Figure{ID: "apply-kubectl", Title: fmt.Sprintf("Apply %d resources, kubectl", cfg.ApplyResources), Unit: "s", Samples: kubectl, Reproduce: repro,
			What: "Seconds of `kubectl create namespace`, `kubectl apply --server-side -f app/` and `kubectl wait --for=condition=Available deployment --all`, run one after the other."},
		&Figure{ID: "apply-ratio", Title: "Apply ratio, Ferry / kubectl", Unit: "×", Samples: ratios(ferry, kubectl), Reproduce: repro,
			What: "The two figures above divided pair by pair: below 1, Ferry is faster."},
	)
	if flux != nil {
		sec.Figures = append(sec.Figures, flux.figures(ferry, cfg.ApplyResources, repro)...)
		peer.WriteString(flux.text())
	}
	sk, so := Summarize(kubectlApply), Summarize(ferryOp)
	sec.Text = fmt.Sprintf("Resources: %s, in region %s, into a new namespace each run; Ferry, kubectl and Flux take turns (the order rotates every run). "+
		"An app that only compares (no automated sync) rendered the commit into the manifest cache first, so Ferry's runs read it from Redis; kubectl reads the files from the working copy. "+
		"kubectl is the stack's own (%s), with `--server-side`, field manager `kubectl`, one request per object, in sequence.\n\n"+
		"| part | median | min–max |\n| --- | --- | --- |\n"+
		"| kubectl apply alone (without the namespace and the wait) | %s s | %s–%s s |\n"+
		"| Ferry's sync operation alone (StartedAt–FinishedAt: apply, then wait for health) | %s s | %s–%s s |\n\n"+
		"Ferry's last run sent the API server %s requests for the apps' kinds, %s requests/s on average over its runs; %s\n",
		resourceMix(cfg.ApplyResources), region, e.kubectlVersion(),
		num(sk.Median), num(sk.Min), num(sk.Max), num(so.Median), num(so.Min), num(so.Max),
		num(ferryRequests.total(isAppKind)), num(Summarize(ferryRate).Mean), e.clientLimits(region)+" By verb: "+ferryRequests.breakdown(1)+".")
	sec.Text += "\n" + peer.String()
	return nil
}

// takingTurns is the order of the sides in run i: it rotates, so that
// each side goes first as often as the others.
func takingTurns(i int, withFlux bool) []string {
	sides := []string{"ferry", "kubectl"}
	if withFlux {
		sides = append(sides, "flux")
	}
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
