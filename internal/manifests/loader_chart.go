package manifests

import (
	"context"
	"fmt"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/render"
)

// ChartFetcher checks out charts of Helm repositories and OCI registries
// and fetches the remote dependencies of charts in Git;
// *chartsource.Charts is one.
type ChartFetcher interface {
	// Checkout writes a chart version into a new directory: root/<chart>.
	Checkout(ctx context.Context, repoURL, chart, version string) (root string, release func(), err error)
	// WithDependencies gives a checkout in which the chart at chartPath
	// has its https:// and oci:// dependencies in charts/.
	WithDependencies(ctx context.Context, root, chartPath string) (string, func(), error)
	// WithCharts gives a checkout with each chart in its place.
	WithCharts(ctx context.Context, root string, charts []chartsource.Placed) (string, func(), error)
}

var _ ChartFetcher = (*chartsource.Charts)(nil)

// checkout gives the directory to render req from: the commit's files, or
// for a chart source the chart version's, with the chart's remote
// dependencies fetched (never by the renderer, which has no network).
func (l *Loader) checkout(ctx context.Context, req Request) (string, func(), error) {
	src := req.Source
	if src.IsChartSource() {
		if l.Charts == nil {
			return "", nil, fmt.Errorf("chart %q of %s: this worker reads no Helm repositories", src.Chart, chartsource.RedactURL(req.RepoURL))
		}
		return l.Charts.Checkout(ctx, req.RepoURL, src.Chart, req.SHA)
	}
	var dir string
	var release func()
	var err error
	if req.Local != "" {
		dir, release, err = l.checkoutLocal(ctx, req.Local)
	} else {
		dir, release, err = l.Repos.Checkout(ctx, req.RepoURL, req.SHA)
	}
	if err != nil || l.Charts == nil {
		return dir, release, err
	}
	if l.KustomizeHelm && src.Helm == nil && src.Directory == nil && src.Plugin == nil {
		if charts := kustomizeCharts(dir, src.Path); len(charts) > 0 {
			placed, releasePlaced, err := l.Charts.WithCharts(ctx, dir, charts)
			if err != nil {
				release()
				return "", nil, err
			}
			return placed, func() { releasePlaced(); release() }, nil
		}
	}
	if src.Kustomize != nil || src.Directory != nil || src.Plugin != nil {
		return dir, release, nil
	}
	deps, releaseDeps, err := l.Charts.WithDependencies(ctx, dir, cleanPath(src.Path))
	if err != nil {
		release()
		return "", nil, err
	}
	return deps, func() { releaseDeps(); release() }, nil
}

// renderSource is the source as the renderer takes it: a chart source
// becomes the Helm chart in the checkout's <chart> directory.
func renderSource(src app.Source) app.Source {
	if !src.IsChartSource() {
		return src
	}
	src.Path, src.Chart = src.Chart, ""
	if src.Helm == nil {
		src.Helm = &app.HelmSource{}
	}
	return src
}

// checkRevision checks the revision a load names: a full commit SHA, or a
// chart version for a chart source.
func checkRevision(req Request) (string, error) {
	rev := strings.TrimSpace(req.SHA)
	if req.Local != "" {
		if req.Source.IsChartSource() {
			return "", &LocalTreeError{fmt.Sprintf("chart %q of %s: a local sync renders a directory, not a chart of a Helm repository", req.Source.Chart, chartsource.RedactURL(req.RepoURL))}
		}
		return localRevision(req.Local), nil
	}
	if req.Source.IsChartSource() {
		if rev == "" {
			return "", fmt.Errorf("load chart %q of %s: no version; resolve the revision first", req.Source.Chart, chartsource.RedactURL(req.RepoURL))
		}
		return rev, nil
	}
	sha := strings.ToLower(rev)
	if len(sha) != 40 || strings.Trim(sha, "0123456789abcdef") != "" {
		return "", fmt.Errorf("load manifests of %s: %q is not a full commit SHA; resolve the revision first", gitsource.RedactURL(req.RepoURL), req.SHA)
	}
	return sha, nil
}

// kustomizeCharts are the charts of repositories that the kustomizations
// of path name in helmCharts and the checkout lacks.
func kustomizeCharts(root, path string) []chartsource.Placed {
	var out []chartsource.Placed
	for _, c := range render.KustomizeCharts(root, cleanPath(path)) {
		out = append(out, chartsource.Placed{RepoURL: c.RepoURL, Name: c.Name, Version: c.Version, Dir: c.Dir,
			Asker: fmt.Sprintf("the helmCharts entry %q of %s", c.Name, c.Kustomization)})
	}
	return out
}
