package bench

// Argo CD is the peer Ferry means to replace: its application controller
// and repo server, built from its release by `hack/tools.sh argocd` (make
// bench runs it) and started on the stack by devenv (Stack.StartArgoCD):
// its objects in the first region's argocd namespace, every region an Argo
// CD cluster Secret. This file writes and reads its Applications.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// argoRefreshAnnotation asks Argo CD's controller to compare an app with
// Git now (`argocd app get --refresh` sets it).
const argoRefreshAnnotation = "argocd.argoproj.io/refresh"

// argo is a running Argo CD and a client of its Applications.
type argo struct {
	cd  *devenv.ArgoCD
	dyn dynamic.Interface
}

// startArgo starts Argo CD as opts say (its logs in the report's); it
// stops with the scenario's Env, or with stop.
func (e *Env) startArgo(ctx context.Context, opts devenv.ArgoCDOptions) (*argo, error) {
	opts.LogDir = filepath.Join(e.Cfg.Out, "logs")
	cd, err := e.Stack.StartArgoCD(ctx, opts)
	if err != nil {
		return nil, err
	}
	e.cleanups = append(e.cleanups, func() { _ = cd.Stop() })
	rc, err := e.Stack.RestConfig(cd.Home)
	if err != nil {
		return nil, err
	}
	a := &argo{cd: cd}
	if a.dyn, err = dynamic.NewForConfig(rc); err != nil {
		return nil, err
	}
	return a, nil
}

// argoApp is an Application of one source directory, automated with prune
// unless Manual, into namespace (created by the sync) of the cluster
// named dest.
type argoApp struct {
	Name, RepoURL, Path, Namespace, Dest string
	Manual                               bool
}

func (a *argo) apply(ctx context.Context, app argoApp) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": app.Name, "namespace": devenv.ArgoCDNamespace},
		"spec": map[string]any{
			"project":     "default",
			"source":      map[string]any{"repoURL": app.RepoURL, "path": app.Path, "targetRevision": "main"},
			"destination": map[string]any{"name": app.Dest, "namespace": app.Namespace},
			"syncPolicy": map[string]any{"automated": map[string]any{"prune": true},
				"syncOptions": []any{"CreateNamespace=true"}},
		},
	}}
	if app.Manual {
		unstructured.RemoveNestedField(u.Object, "spec", "syncPolicy", "automated")
	}
	_, err := a.apps().Apply(ctx, app.Name, u, metav1.ApplyOptions{FieldManager: "ferry-bench", Force: true})
	if err != nil {
		return fmt.Errorf("argo cd: apply Application %s: %w", app.Name, err)
	}
	return nil
}

// logs names its log files as the report's text shows them.
func (a *argo) logs() string {
	var out []string
	for _, l := range a.cd.Logs() {
		out = append(out, "`logs/"+l+"`")
	}
	return strings.Join(out, " and ")
}

func (a *argo) apps() dynamic.ResourceInterface {
	return a.dyn.Resource(devenv.ArgoCDAppResource).Namespace(devenv.ArgoCDNamespace)
}

// refresh sets the refresh annotation, as `argocd app get --refresh` does.
func (a *argo) refresh(ctx context.Context, name string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"normal"}}}`, argoRefreshAnnotation)
	if _, err := a.apps().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("argo cd: refresh %s: %w", name, err)
	}
	return nil
}

// argoStatus is what the benchmarks read of an Application's status.
type argoStatus struct {
	Sync, Revision, Health string
	// Operation is the phase of the last sync operation, OperationRevision
	// the revision it synced.
	Operation, OperationRevision string
}

func (s argoStatus) String() string {
	return fmt.Sprintf("%s/%s at %s, operation %s at %s", s.Sync, s.Health, short(s.Revision), s.Operation, short(s.OperationRevision))
}

// syncedAt: Synced at sha, by an operation that succeeded at sha (as
// Ferry's Synced is shown once its operation applied the commit).
func (s argoStatus) syncedAt(sha string) bool {
	return s.Sync == "Synced" && s.Revision == sha && s.Operation == "Succeeded" && s.OperationRevision == sha
}

func (a *argo) status(ctx context.Context, name string) (argoStatus, error) {
	u, err := a.apps().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return argoStatus{}, err
	}
	str := func(path ...string) string {
		s, _, _ := unstructured.NestedString(u.Object, append([]string{"status"}, path...)...)
		return s
	}
	return argoStatus{Sync: str("sync", "status"), Revision: str("sync", "revision"), Health: str("health", "status"),
		Operation: str("operationState", "phase"), OperationRevision: str("operationState", "syncResult", "revision")}, nil
}

// waitApp reads the app's status every poll until cond holds, and returns
// when it first saw it so.
func (a *argo) waitApp(ctx context.Context, name string, poll time.Duration, cond func(argoStatus) bool) (time.Time, error) {
	last := "no status yet"
	for {
		s, err := a.status(ctx, name)
		now := time.Now()
		if err == nil && cond(s) {
			return now, nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = s.String()
		}
		if err := a.cd.Exited(); err != nil {
			return time.Time{}, err
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("argo cd: app %s: %w; last seen: %s", name, ctx.Err(), last)
		case <-time.After(poll):
		}
	}
}
