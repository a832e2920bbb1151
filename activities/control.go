// Package activities adapts Ferry's domain (internal/) to Temporal: structs
// holding the clients, one method per activity, errors classified as
// retryable or not. No orchestration lives here.
package activities

import (
	"cmp"
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/hooks"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// Control holds the Git and render activities of the control queue.
type Control struct {
	Repos *gitsource.Repos
	// Charts resolves the versions of charts from Helm repositories and
	// OCI registries (spec.source.chart); nil refuses them.
	Charts *chartsource.Charts
	Loader *manifests.Loader
	// Validate checks the child Applications an app of apps renders.
	Validate app.ValidateOptions
	// Projects reads AppProjects: the one a render names, whose
	// sourceRepos the repositories a render fetches for its files (remote
	// Kustomize bases, chart dependencies) must match, and an app's, for
	// the rule on the revisions a sync request names. Nil allows every
	// repository and applies the revision rule to every app.
	Projects ProjectReader
	// Spared, when set, is called for each render that the app's
	// manifest-generate-paths spared (control_paths.go).
	Spared func()

	workers workersCache // control_workers.go
}

// Register adds the control activities to a worker of the control queue.
func (c *Control) Register(w worker.Registry) {
	w.RegisterActivityWithOptions(c.ResolveRevision, activity.RegisterOptions{Name: contract.ActivityResolveRevision})
	w.RegisterActivityWithOptions(c.Render, activity.RegisterOptions{Name: contract.ActivityRender})
	w.RegisterActivityWithOptions(c.HandOverManifests, activity.RegisterOptions{Name: contract.ActivityHandOver})
	w.RegisterActivityWithOptions(c.RevisionMetadata, activity.RegisterOptions{Name: contract.ActivityRevisionMetadata})
}

// ResolveRevision turns a branch, tag, HEAD or SHA into a commit SHA, through
// the ls-remote that every app on the repo shares.
func (c *Control) ResolveRevision(ctx context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
	if in.Chart != "" {
		return c.resolveChart(ctx, in)
	}
	var opts []gitsource.ResolveOption
	switch {
	case in.Fresh:
		opts = append(opts, gitsource.ForceRefresh())
	case in.MaxAge > 0:
		opts = append(opts, gitsource.MaxAge(in.MaxAge))
	}
	sha, err := c.Repos.Resolve(ctx, in.RepoURL, in.TargetRevision, opts...)
	if err != nil {
		return contract.ResolveResult{}, classify(err)
	}
	if in.Requested != nil {
		if err := c.checkRequested(ctx, in, sha); err != nil {
			return contract.ResolveResult{}, err
		}
	}
	return contract.ResolveResult{SHA: sha, Workers: c.regionWorkers(ctx, in.Regions)}, nil
}

// resolveChart turns a chart version or semver constraint into the newest
// matching version, through the index (or tag list) every app on the
// repository shares.
func (c *Control) resolveChart(ctx context.Context, in contract.ResolveInput) (contract.ResolveResult, error) {
	if c.Charts == nil {
		return contract.ResolveResult{}, temporal.NewNonRetryableApplicationError(
			"this worker reads no Helm repositories", contract.ErrInvalidSource, nil)
	}
	var opts []chartsource.ResolveOption
	switch {
	case in.Fresh:
		opts = append(opts, chartsource.ForceRefresh())
	case in.MaxAge > 0:
		opts = append(opts, chartsource.MaxAge(in.MaxAge))
	}
	v, err := c.Charts.Resolve(ctx, in.RepoURL, in.Chart, in.TargetRevision, opts...)
	if err != nil {
		return contract.ResolveResult{}, classify(err)
	}
	return contract.ResolveResult{SHA: v, Workers: c.regionWorkers(ctx, in.Regions)}, nil
}

// ProjectReader reads an AppProject by name; *TemporalProjects is one.
type ProjectReader interface {
	Project(ctx context.Context, name string) (*app.AppProject, error)
}

// repoCheck is the rule of the project the render names. The render may
// run as a local activity inside the app's workflow task, so it reads the
// project's workflow, never the app's (which answers no query until the
// task ends). The default project is read too: an applied AppProject named
// default may allow fewer repositories than the built-in one.
func (c *Control) repoCheck(ctx context.Context, in contract.RenderInput) netpolicy.RepoCheck {
	if c.Projects == nil {
		return nil
	}
	project := cmp.Or(in.Project, app.DefaultProject)
	return repoCheck(in.App, func() (*app.AppProject, error) { return c.Projects.Project(ctx, project) })
}

// Render renders the source at a SHA into the manifest cache and returns its
// digest: the manifests themselves never enter the workflow history. A hard
// one renders even when the cache holds the SHA, and replaces the entry.
func (c *Control) Render(ctx context.Context, in contract.RenderInput) (contract.RenderResult, error) {
	defer heartbeatEvery(ctx, heartbeatInterval, "render")()
	if c.unchanged(ctx, in) {
		return contract.RenderResult{Unchanged: true}, nil
	}
	var loaded *manifests.Loaded
	var err error
	check := c.repoCheck(ctx, in)
	if len(in.Sources) > 0 {
		loaded, err = c.Loader.LoadSources(ctx, sourcesRequest(in.App, in.Namespace, in.Sources, in.Hard, in.Fresh, check))
	} else {
		loaded, err = c.Loader.LoadApp(ctx, manifests.Request{
			RepoURL: in.Source.RepoURL, SHA: in.SHA, Source: in.Source, App: in.App, Namespace: in.Namespace, Hard: in.Hard,
			Fresh: in.Fresh, RepoCheck: check, Local: in.Local,
		})
	}
	if err != nil {
		return contract.RenderResult{}, classify(err)
	}
	objs := make([]map[string]any, len(loaded.Objects))
	for i, o := range loaded.Objects {
		objs[i] = o.Object
	}
	children, err := app.ChildrenOf(in.App, objs, c.Validate)
	if err != nil {
		return contract.RenderResult{}, temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrInvalidManifests, nil)
	}
	hookCounts, err := hooks.Count(loaded.Objects)
	if err != nil {
		return contract.RenderResult{}, temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrInvalidManifests, nil)
	}
	types := loaded.SourceTypes
	if len(in.Sources) == 0 && loaded.SourceType != "" {
		types = []string{loaded.SourceType}
	}
	return contract.RenderResult{Digest: loaded.Digest, Count: len(loaded.Objects) - len(children), Children: children, Hooks: hookCounts,
		RemoteBases: loaded.RemoteBases, SourceTypes: types, Summary: app.SummaryOf(objs)}, nil
}
