package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/chartsource"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/manifests"
)

// resolveForDiff resolves a source's revision afresh: a commit, or a
// chart version.
func resolveForDiff(ctx context.Context, repos *gitsource.Repos, charts *chartsource.Charts, src app.Source, revision string) (string, error) {
	var sha string
	var err error
	if src.IsChartSource() {
		sha, err = charts.Resolve(ctx, src.RepoURL, src.Chart, revision, chartsource.ForceRefresh())
	} else {
		sha, err = repos.Resolve(ctx, src.RepoURL, revision, gitsource.ForceRefresh())
	}
	if err != nil {
		return "", fmt.Errorf("resolve %q of %s: %w", revision, gitsource.RedactURL(src.RepoURL), err)
	}
	return sha, nil
}

// renderSourcesForDiff renders a multi-source app as the workers do: every
// source at the revision it names (or, with --revision R1,R2,…, one per
// source), put together. The revision returned is theirs joined by commas.
func renderSourcesForDiff(ctx context.Context, f *diffFlags, a *app.Application, ns string, repos *gitsource.Repos,
	charts *chartsource.Charts, loader *manifests.Loader) (*manifests.Loaded, string, error) {
	srcs := a.Spec.Sources
	var pinned []string
	if f.revision != "" {
		if pinned = strings.Split(f.revision, ","); len(pinned) != len(srcs) {
			return nil, "", fmt.Errorf("app %q has %d sources: --revision %q names %d; give one per source, joined by commas", a.Metadata.Name, len(srcs), f.revision, len(pinned))
		}
	}
	req := manifests.SourcesRequest{App: a.Metadata.Name, Namespace: ns}
	revs := make([]string, len(srcs))
	for i, src := range srcs {
		revision := src.Revision()
		if pinned != nil {
			revision = pinned[i]
		}
		sha, err := resolveForDiff(ctx, repos, charts, src, revision)
		if err != nil {
			return nil, "", fmt.Errorf("spec.sources[%d]: %w", i, err)
		}
		revs[i] = sha
		req.Sources = append(req.Sources, manifests.SourceAt{Source: src, Revision: sha})
	}
	loaded, err := loader.LoadSources(ctx, req)
	if err != nil {
		return nil, "", fmt.Errorf("render the %d sources of app %q at %s: %w", len(srcs), a.Metadata.Name, short(strings.Join(revs, ",")), err)
	}
	return loaded, strings.Join(revs, ","), nil
}
