package activities

import (
	"context"
	"fmt"
	"sync"

	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/workflows"
)

// sourcesRequest is the load of a multi-source app's sources.
func sourcesRequest(appName, namespace string, sources []workflows.SourceRevision, hard, fresh bool, check netpolicy.RepoCheck) manifests.SourcesRequest {
	req := manifests.SourcesRequest{App: appName, Namespace: namespace, Hard: hard, Fresh: fresh, RepoCheck: check}
	for _, s := range sources {
		req.Sources = append(req.Sources, manifests.SourceAt{Source: s.Source, Revision: s.Revision})
	}
	return req
}

// loadTarget loads the target's manifests: its one source, or every source
// of a multi-source app put together.
func (r *Region) loadTarget(ctx context.Context, t workflows.Target, hard bool) (*manifests.Loaded, error) {
	check := repoCheck(ctx, r.Projects, t.App)
	if len(t.Sources) > 0 {
		return r.Loader.LoadSources(ctx, sourcesRequest(t.App, t.Namespace, t.Sources, hard, false, check))
	}
	return r.Loader.LoadApp(ctx, manifests.Request{RepoURL: t.Source.RepoURL, SHA: t.SHA, Source: t.Source, App: t.App, Namespace: t.Namespace, Hard: hard,
		RepoCheck: check})
}

// repoCheck is the app's project's rule on the repositories a render of
// the app fetches because its files name them (netpolicy.RepoCheck). The
// project is read from the app's workflow, as a region reads it, and only
// when the render is about to fetch such a repository: most renders fetch
// none. Without projects (tests), every repository is allowed.
func repoCheck(ctx context.Context, projects ProjectSource, appName string) netpolicy.RepoCheck {
	if projects == nil {
		return nil
	}
	var once sync.Once
	var check netpolicy.RepoCheck
	var readErr error
	return func(repoURL string) error {
		once.Do(func() {
			_, p, err := projects.AppProject(ctx, appName)
			if err != nil {
				readErr = fmt.Errorf("read the project of app %q to check %s against its sourceRepos: %w", appName, gitsource.RedactURL(repoURL), err)
				return
			}
			check = p.RepoCheck(appName)
		})
		switch {
		case readErr != nil:
			return readErr
		case check == nil:
			return nil
		}
		return check(repoURL)
	}
}
