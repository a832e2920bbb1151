package bench

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// appSpec is a benchmark Application: automated sync with prune and self
// heal, CreateNamespace, one namespace in every region it targets.
type appSpec struct {
	Name, RepoURL, Path, Namespace string
	Regions                        []string
	// Poll is spec.pollInterval; zero keeps Ferry's default.
	Poll time.Duration
	// Manual leaves out syncPolicy.automated: the app only compares.
	Manual bool
	// ObjectNamespace is metadata.namespace: the control cluster's
	// namespace of an Application object; empty for `ferry app apply`.
	ObjectNamespace string
	// Annotations are metadata.annotations.
	Annotations map[string]string
}

func (a appSpec) yaml() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\n", a.Name)
	if a.ObjectNamespace != "" {
		fmt.Fprintf(&b, "  namespace: %s\n", a.ObjectNamespace)
	}
	if len(a.Annotations) > 0 {
		b.WriteString("  annotations:\n")
		for _, k := range slices.Sorted(maps.Keys(a.Annotations)) {
			fmt.Fprintf(&b, "    %s: %q\n", k, a.Annotations[k])
		}
	}
	b.WriteString("spec:\n")
	if a.Poll > 0 {
		fmt.Fprintf(&b, "  pollInterval: %s\n", a.Poll)
	}
	fmt.Fprintf(&b, "  source:\n    repoURL: %s\n    targetRevision: main\n    path: %s\n  destinations:\n", a.RepoURL, a.Path)
	for _, r := range a.Regions {
		fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, a.Namespace)
	}
	b.WriteString("  syncPolicy:\n")
	if !a.Manual {
		b.WriteString("    automated: {prune: true, selfHeal: true}\n")
	}
	b.WriteString("    syncOptions: [CreateNamespace=true]\n")
	return b.String()
}

// ferry runs the ferry CLI against the stack.
func (e *Env) ferry(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(e.Cfg.BinDir, "ferry"), args...)
	cmd.Env = e.Stack.Environ()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("ferry %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// applyApps writes each app's file and runs `ferry app apply -f` for it,
// parallel runs at a time. It returns when each apply began.
func (e *Env) applyApps(ctx context.Context, apps []appSpec, parallel int) (map[string]time.Time, error) {
	dir, err := e.tempDir("apps")
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	began := make(map[string]time.Time, len(apps))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, a := range apps {
		file := filepath.Join(dir, a.Name+".yaml")
		if err := os.WriteFile(file, []byte(a.yaml()), 0o644); err != nil {
			return nil, err
		}
		g.Go(func() error {
			t := time.Now()
			if _, err := e.ferry(gctx, "app", "apply", "-f", file); err != nil {
				return err
			}
			mu.Lock()
			began[a.Name] = t
			mu.Unlock()
			return nil
		})
	}
	return began, g.Wait()
}

// view queries an app's status.
func (e *Env) view(ctx context.Context, name string) (*contract.View, error) {
	res, err := e.Temporal.QueryWorkflow(ctx, contract.WorkflowID(name), "", contract.QueryStatus)
	if err != nil {
		return nil, err
	}
	var v contract.View
	if err := res.Get(&v); err != nil {
		return nil, err
	}
	return &v, nil
}

// syncedAt reports whether every region of the app is Synced at sha (any
// revision when sha is empty), and Healthy too when healthy is set.
func syncedAt(v *contract.View, sha string, regions []string, healthy bool) bool {
	st := v.Status
	if st.Sync.Status != app.SyncStatusSynced || (sha != "" && st.Sync.Revision != sha) {
		return false
	}
	if healthy && st.Health.Status != app.HealthHealthy {
		return false
	}
	for _, r := range regions {
		sum, ok := st.Regions[r]
		if !ok || sum.Sync != app.SyncStatusSynced || (sha != "" && sum.Revision != sha) {
			return false
		}
		if healthy && sum.Health != app.HealthHealthy {
			return false
		}
	}
	return true
}

// waitSynced polls the app's status every poll until syncedAt holds, and
// returns when it first saw it so.
func (e *Env) waitSynced(ctx context.Context, name, sha string, regions []string, healthy bool, poll time.Duration) (time.Time, *contract.View, error) {
	return e.waitFor(ctx, name, "Synced at "+short(sha), poll, func(v *contract.View) bool { return syncedAt(v, sha, regions, healthy) })
}

// waitFor polls the app's status every poll until cond holds.
func (e *Env) waitFor(ctx context.Context, name, what string, poll time.Duration, cond func(*contract.View) bool) (time.Time, *contract.View, error) {
	last := "no answer yet"
	for {
		v, err := e.view(ctx, name)
		now := time.Now()
		if err == nil && cond(v) {
			return now, v, nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = describe(v)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, v, fmt.Errorf("app %s not %s: %w; last seen: %s", name, what, ctx.Err(), last)
		case <-time.After(poll):
		}
	}
}

func describe(v *contract.View) string {
	if v == nil {
		return "no status"
	}
	st := v.Status
	s := fmt.Sprintf("%s/%s at %s", st.Sync.Status, st.Health.Status, short(st.Sync.Revision))
	if op := st.OperationState; op != nil {
		s += fmt.Sprintf(", operation %s %s: %s", op.ID, op.Phase, op.Message)
	}
	for _, c := range st.Conditions {
		s += fmt.Sprintf(", %s: %s", c.Type, c.Message)
	}
	return s
}

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}
