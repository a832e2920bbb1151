package main

import (
	"fmt"

	"github.com/ferry-gitops/ferry/internal/customize"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/regions"
	"github.com/ferry-gitops/ferry/internal/render"
)

// loadCustomizations reads --resource-customizations: Argo CD's argocd-cm
// ConfigMap manifest, whose Lua health checks, ignoreDifferences and
// resource.exclusions/inclusions the region workers apply. Every problem of the file stops the worker at start.
func loadCustomizations(file string) (*customize.Set, error) {
	set, err := customize.ParseFile(file)
	if err != nil || set == nil {
		return nil, err
	}
	if _, err := diff.Compile(set.IgnoreAll()); err != nil {
		return nil, fmt.Errorf("--resource-customizations %s: resource.customizations.ignoreDifferences: %w", file, err)
	}
	return set, nil
}

// kustomizeOptions are the kustomize.buildOptions of the argocd-cm of
// --resource-customizations that Ferry takes.
func kustomizeOptions(file string) (render.KustomizeOptions, error) {
	set, err := customize.ParseFile(file)
	if err != nil || set == nil {
		return render.KustomizeOptions{}, err
	}
	o, err := render.ParseKustomizeBuildOptions(set.KustomizeBuildOptions)
	if err != nil {
		return o, fmt.Errorf("--resource-customizations %s: %w", file, err)
	}
	return o, nil
}

// excludedIn is what resource.exclusions/inclusions leave alone in region:
// an entry's clusters are matched against the region's name, aliases and
// server URL. Nil when the file has no filters.
func excludedIn(set *customize.Set, region string, rc *regions.Config) func(group, kind string) bool {
	if !set.HasFilters() {
		return nil
	}
	names := []string{region}
	if r, ok := rc.ByName(region); ok {
		names = append(names, r.Aliases...)
		if r.Server != "" {
			names = append(names, r.Server)
		}
	}
	return func(group, kind string) bool { return set.Excluded(group, kind, names...) }
}
