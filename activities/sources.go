package activities

import (
	"context"
	"fmt"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
)

// sourcesRequest is the load of a multi-source app's sources.
func sourcesRequest(appName, namespace string, sources []contract.SourceRevision, hard, fresh bool, check netpolicy.RepoCheck) manifests.SourcesRequest {
	req := manifests.SourcesRequest{App: appName, Namespace: namespace, Hard: hard, Fresh: fresh, RepoCheck: check}
	for _, s := range sources {
		req.Sources = append(req.Sources, manifests.SourceAt{Source: s.Source, Revision: s.Revision})
	}
	return req
}

// loadTarget loads the target's manifests: its one source, or every source
// of a multi-source app put together.
func loadTarget(ctx context.Context, l *manifests.Loader, t contract.Target, hard bool, check netpolicy.RepoCheck) (*manifests.Loaded, error) {
	if len(t.Sources) > 0 {
		return l.LoadSources(ctx, sourcesRequest(t.App, t.Namespace, t.Sources, hard, false, check))
	}
	return l.LoadApp(ctx, manifests.Request{RepoURL: t.Source.RepoURL, SHA: t.SHA, Source: t.Source, App: t.App, Namespace: t.Namespace, Hard: hard,
		RepoCheck: check, Local: t.Local})
}

// loadRendered loads the set the workflow rendered, of the target's
// digest. A cached set of another digest is stale (a hard refresh rendered
// anew on a control worker with a cache of its own): it is rendered again.
// where names the worker, for the error when the digests still differ.
func loadRendered(ctx context.Context, l *manifests.Loader, t contract.Target, check netpolicy.RepoCheck, where string) (*manifests.Loaded, error) {
	loaded, err := loadTarget(ctx, l, t, false, check)
	if err == nil && loaded.CacheHit && loaded.Digest != t.Digest {
		loaded, err = loadTarget(ctx, l, t, true, check)
	}
	if err != nil {
		return nil, classify(err)
	}
	if loaded.Digest != t.Digest {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"app %q: manifests of %s rendered %s differ from the ones its workflow rendered (digest %.12s, want %.12s): run the same Ferry version on every worker",
			t.App, t.SHA, where, loaded.Digest, t.Digest), contract.ErrInvalidManifests, nil)
	}
	return loaded, nil
}

// repoCheck is the app's project's rule on the repositories a render of
// the app fetches because its files name them (netpolicy.RepoCheck). The
// project is read (through read) only when the render is about to fetch
// such a repository: most renders fetch none.
func repoCheck(appName string, read func() (*app.AppProject, error)) netpolicy.RepoCheck {
	var once sync.Once
	var check netpolicy.RepoCheck
	var readErr error
	return func(repoURL string) error {
		once.Do(func() {
			p, err := read()
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

// repoCheck reads the project as a region does (region_caller.go);
// without projects (tests), every repository is allowed.
func (r *Region) repoCheck(ctx context.Context, appName string) netpolicy.RepoCheck {
	if r.Projects == nil {
		return nil
	}
	return repoCheck(appName, func() (*app.AppProject, error) {
		a, err := r.appProject(ctx, appName)
		return a.project, err
	})
}
