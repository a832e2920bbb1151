package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// The floors: what the same work costs without Ferry, with the stack's own
// kubectl on the same stack in the same run, so that a ratio says what is
// Ferry's.

// Issue 20's goals.
const (
	goalOnboardRatio = 1.5  // Ferry's fleet onboarding / the kubectl floor
	goalOnboardAll   = 60   // seconds for 1,000 apps
	goalFanoutFloor  = 1.1  // three regions / three parallel kubectl applies
	goalPushFloor    = 1.3  // push to Synced p50 / apply + rollout p50
	goalIdleEvents   = 7    // history events per no-change reconcile
	goalIdleCPU      = 0.05 // cores of worker + Temporal, 1,000 apps at 180 s
)

var issue20 = "issue 20"

// onboardFloor applies every app's directory as `ferry app apply --parallel`
// applies the apps, applyParallel at a time: per app, `kubectl create
// namespace`, `kubectl apply --server-side` and `kubectl wait` for its
// Deployment Available (e.kubectlApply), into a namespace of its own
// (floor-NAME). It returns the whole time and each app's.
func (e *Env) onboardFloor(ctx context.Context, apps []appSpec, repos map[string]*gitRepo) (time.Duration, []float64, error) {
	var mu sync.Mutex
	var perApp []float64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(applyParallel)
	began := time.Now()
	for _, a := range apps {
		repo := repos[a.RepoURL]
		g.Go(func() error {
			took, _, err := e.kubectlApply(gctx, a.Regions[0], "floor-"+a.Name, repo.Path(a.Path))
			if err != nil {
				return fmt.Errorf("floor of %s: %w", a.Name, err)
			}
			mu.Lock()
			perApp = append(perApp, took.Seconds())
			mu.Unlock()
			return nil
		})
	}
	err := g.Wait()
	return time.Since(began), perApp, err
}

// parallelKubectl applies dir into namespace ns of every region at once,
// one e.kubectlApply each, and returns when the last one's Deployments are
// Available: the floor of a fan-out to those regions.
func (e *Env) parallelKubectl(ctx context.Context, regions []string, ns, dir string) (time.Duration, error) {
	g, gctx := errgroup.WithContext(ctx)
	began := time.Now()
	for _, r := range regions {
		g.Go(func() error {
			_, _, err := e.kubectlApply(gctx, r, ns, dir)
			return err
		})
	}
	err := g.Wait()
	return time.Since(began), err
}

// rolloutFloor applies dir, server-side, into namespace ns of region (made
// by an earlier run or here) and waits for the rollout of deployment
// (`kubectl rollout status`): a push's floor, apply plus the Deployment
// Available at the new revision.
func (e *Env) rolloutFloor(ctx context.Context, region, ns, dir, deployment string) (time.Duration, error) {
	kubectl := func(args ...string) error { return e.kubectl(ctx, region, args...) }
	_ = kubectl("create", "namespace", ns) // there already after the first run
	began := time.Now()
	if err := kubectl("apply", "--server-side", "-n", ns, "-f", dir); err != nil {
		return 0, err
	}
	if err := kubectl("rollout", "status", "-n", ns, "deployment/"+deployment, "--timeout=2m"); err != nil {
		return 0, err
	}
	return time.Since(began), nil
}

// kubectl runs the stack's kubectl against region.
func (e *Env) kubectl(ctx context.Context, region string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(e.Stack.ToolsBin, "kubectl"),
		append([]string{"--kubeconfig", e.Stack.Kubeconfig, "--context", region}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, lastLines(string(out), 5))
	}
	return nil
}

// goal attaches one of issue 20's goals to a figure.
func goal(max float64) *Goal { return &Goal{Max: max, Source: issue20} }

// dropFloor deletes the floor's namespaces and waits for them to go, so
// that Ferry's worker does not cache the floor's objects too and the
// stack's own traffic is measured without the deletions.
func (e *Env) dropFloor(ctx context.Context, region string, apps []appSpec) {
	for i := 0; i < len(apps); i += 100 {
		args := []string{"delete", "namespace", "--timeout=5m"}
		for _, a := range apps[i:min(len(apps), i+100)] {
			args = append(args, "floor-"+a.Name)
		}
		if err := e.kubectl(ctx, region, args...); err != nil {
			e.logf("onboarding floor: %v", err)
		}
	}
}

// pushFloor measures the floor of a push on the push scenario's stack:
// the push app's files at a new revision applied by kubectl into a
// namespace of their own and the Deployment's rollout waited for, as many
// times as Ferry was pushed; then Ferry's p50 (pushed, the refresh signal's
// latencies) over the floor's.
func (e *Env) pushFloor(ctx context.Context, sec *Section, region string, pushed []float64) error {
	cfg := e.Cfg
	dir, err := e.tempDir("push-floor")
	if err != nil {
		return err
	}
	var floor []float64
	for i := 1; i <= max(cfg.Pushes, 1); i++ {
		rev := filepath.Join(dir, fmt.Sprintf("rev-%d", i))
		for name, body := range resourceFiles("", pushResources, i) {
			if err := writeFile(filepath.Join(rev, name), body); err != nil {
				return err
			}
		}
		d, err := e.rolloutFloor(ctx, region, "push-floor", rev, "web-000")
		if err != nil {
			return fmt.Errorf("push floor: %w", err)
		}
		floor = append(floor, d.Seconds())
	}
	repro := cfg.reproduce(ScenarioPush, fmt.Sprintf("-pushes %d", cfg.Pushes))
	var ratio []float64
	if f, p := Summarize(floor), Summarize(pushed); f.N > 0 && p.N > 0 {
		ratio = []float64{p.Median / f.Median}
	}
	sec.Figures = append(sec.Figures,
		&Figure{ID: "push-floor", Title: "Push floor, kubectl apply and rollout, 1 region", Unit: "s", Samples: floor, Reproduce: repro,
			What: say(pushText{Resources: pushResources, Region: region}, "what-floor")},
		&Figure{ID: "push-floor-ratio", Title: "Push to Synced p50 / the floor's p50, 1 region", Unit: "×", Samples: ratio, Reproduce: repro, Goal: goal(goalPushFloor),
			What: say(pushText{}, "what-floor-ratio")},
	)
	return nil
}

func writeFile(path, body string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(body), 0o644)
}
