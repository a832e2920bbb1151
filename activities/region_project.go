package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// ProjectSource tells a region worker an app, as its workflow runs it, and
// the AppProject it belongs to. The worker asks it itself rather than
// trusting the activity's input: a Temporal client can schedule a Sync on
// a region queue directly.
type ProjectSource interface {
	AppProject(ctx context.Context, appName string) (*app.Application, *app.AppProject, error)
	ProjectReader
}

// TemporalProjects reads an app's spec.project from the app's workflow and
// the project from its own: the durable state the control plane keeps.
type TemporalProjects struct {
	Client client.Client
	// Cache answers for a project's workflow that has not moved since it
	// last did; nil asks the workflow every time.
	Cache *ferryclient.ProjectCache
}

// getProject reads a project through the cache, if there is one.
func getProject(ctx context.Context, c client.Client, cache *ferryclient.ProjectCache, name string) (*contract.ProjectView, error) {
	if cache != nil {
		return cache.Get(ctx, name)
	}
	return ferryclient.GetProject(ctx, c, name)
}

var _ ProjectSource = (*TemporalProjects)(nil)

func (t *TemporalProjects) AppProject(ctx context.Context, appName string) (*app.Application, *app.AppProject, error) {
	v, err := ferryclient.Query(ctx, t.Client, appName)
	if isNotFound(err) {
		return nil, nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"app %q does not run: a region worker applies only what a running app asks for", appName), contract.ErrProjectDenied, nil)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("app %q: ask its workflow for its project: %w", appName, err)
	}
	pv, err := getProject(ctx, t.Client, t.Cache, v.ProjectOf())
	var nf *contract.ProjectNotFoundError
	if errors.As(err, &nf) {
		return nil, nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("app %q: %v", appName, err), contract.ErrProjectDenied, nil)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("app %q: read project %q: %w", appName, v.ProjectOf(), err)
	}
	return &v.Application, &pv.AppProject, nil
}

// Project reads a project by name from its workflow.
func (t *TemporalProjects) Project(ctx context.Context, name string) (*app.AppProject, error) {
	pv, err := getProject(ctx, t.Client, t.Cache, name)
	if err != nil {
		return nil, fmt.Errorf("read project %q: %w", name, err)
	}
	return &pv.AppProject, nil
}

var _ ProjectReader = (*TemporalProjects)(nil)

// permitted checks the objects a sync or hook run is about to send against
// the app's project, before the first of them is sent: a violation fails
// the activity for good, naming each object, the rule and the project. It
// returns the Cluster to send them through: one that writes as the
// project's ServiceAccount for the destination (region_identity.go).
//
// With CreateNamespace=true the namespace the sync would create counts as
// one of its objects (a cluster-scoped Namespace), as in Argo CD, unless the
// region has it already.
func (r *Region) permitted(ctx context.Context, t contract.Target, namespace string, opts app.SyncOptions, objs []*unstructured.Unstructured) (Cluster, error) {
	if r.Projects == nil {
		return r.Cluster, nil
	}
	a, err := r.appProject(ctx, t.App)
	if err != nil {
		return nil, err
	}
	if err := r.check(ctx, a.project, t, namespace, opts, objs); err != nil {
		return nil, err
	}
	return r.writer(t.App, a)
}

func (r *Region) check(ctx context.Context, p *app.AppProject, t contract.Target, namespace string, opts app.SyncOptions, objs []*unstructured.Unstructured) error {
	if ns, name := app.SplitName(t.App); ns != "" {
		if err := p.CheckSourceNamespace(name, ns); err != nil {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%v: nothing of this sync was applied in region %s", err, r.Name), contract.ErrProjectDenied, nil)
		}
	}
	if p.IsBuiltIn() {
		return nil // allows everything
	}
	for _, src := range t.SourceList() {
		if !p.PermitsRepo(src.RepoURL) {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"app %q: project %q does not allow source repository %s (sourceRepos): nothing of this sync was applied in region %s",
				t.App, p.Metadata.Name, src.RepoURL, r.Name), contract.ErrProjectDenied, nil)
		}
	}
	placed, err := r.Cluster.Placements(namespace, objs)
	if err != nil {
		return classify(err)
	}
	if opts.CreateNamespace && namespace != "" && !p.PermitsKind("", "Namespace", false) {
		exists, err := r.Cluster.NamespaceExists(ctx, namespace)
		if err != nil {
			return classify(err)
		}
		if !exists {
			placed = append(placed, app.PlacedObject{Key: app.ResourceKey{Version: "v1", Kind: "Namespace", Name: namespace}, Known: true})
		}
	}
	if err := p.CheckObjects(t.App, r.Name, r.Regions, placed); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrProjectDenied, nil)
	}
	return nil
}

// pruneCheck refuses a prune of objects the app's project does not allow
// (a project narrowed since they were applied), as Argo CD refuses to
// sync a resource its project does not permit: nothing is pruned then.
// The project is read when there is something to prune, not before.
func (r *Region) pruneCheck(ctx context.Context, t contract.Target) func([]*unstructured.Unstructured) error {
	if r.Projects == nil {
		return nil
	}
	return func(stale []*unstructured.Unstructured) error {
		a, err := r.appProject(ctx, t.App)
		if err != nil {
			return err
		}
		p := a.project
		if p.IsBuiltIn() {
			return nil
		}
		placed, err := r.Cluster.Placements("", stale)
		if err != nil {
			return classify(err)
		}
		if err := p.CheckObjects(t.App, r.Name, r.Regions, placed); err != nil {
			// Asked once the sync's objects are applied (kube.ApplyRequest).
			if refused := (*app.ObjectsError)(nil); errors.As(err, &refused) {
				refused.Prune = true
			}
			return temporal.NewNonRetryableApplicationError("prune refused: "+err.Error(), contract.ErrProjectDenied, nil)
		}
		return nil
	}
}

// prohibits is the rule of the project a compare names on the kinds and
// namespaces of the app's objects in this region (kube.CompareRequest
// Prohibits): a compare shows what the project does not permit as Argo
// CD's controller does. The built-in default project permits everything
// and names nothing; no project is read where the worker reads none.
func (r *Region) prohibits(ctx context.Context, project string) (func(app.PlacedObject) string, error) {
	if r.Projects == nil {
		return nil, nil
	}
	p, err := r.Projects.Project(ctx, cmp.Or(project, app.DefaultProject))
	var nf *contract.ProjectNotFoundError
	if errors.As(err, &nf) {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrProjectDenied, nil)
	}
	if err != nil {
		return nil, err
	}
	if p.IsBuiltIn() {
		return nil, nil
	}
	return func(o app.PlacedObject) string { return p.Prohibits(r.Name, r.Regions, o) }, nil
}
