package activities

import (
	"context"

	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/workflows"
)

// sourcesRequest is the load of a multi-source app's sources.
func sourcesRequest(appName, namespace string, sources []workflows.SourceRevision, hard, fresh bool) manifests.SourcesRequest {
	req := manifests.SourcesRequest{App: appName, Namespace: namespace, Hard: hard, Fresh: fresh}
	for _, s := range sources {
		req.Sources = append(req.Sources, manifests.SourceAt{Source: s.Source, Revision: s.Revision})
	}
	return req
}

// loadTarget loads the target's manifests: its one source, or every source
// of a multi-source app put together.
func (r *Region) loadTarget(ctx context.Context, t workflows.Target, hard bool) (*manifests.Loaded, error) {
	if len(t.Sources) > 0 {
		return r.Loader.LoadSources(ctx, sourcesRequest(t.App, t.Namespace, t.Sources, hard, false))
	}
	return r.Loader.LoadApp(ctx, manifests.Request{RepoURL: t.Source.RepoURL, SHA: t.SHA, Source: t.Source, App: t.App, Namespace: t.Namespace, Hard: hard})
}
