package main

import (
	"fmt"
	"os"

	"github.com/ferry-gitops/ferry/internal/customize"
	"github.com/ferry-gitops/ferry/internal/diff"
)

// loadCustomizations reads --resource-customizations: Argo CD's argocd-cm
// ConfigMap manifest, whose Lua health checks and ignoreDifferences the
// region workers apply. Every problem of the file stops the worker at start.
func loadCustomizations(file string) (*customize.Set, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--resource-customizations: %w", err)
	}
	set, err := customize.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("--resource-customizations %s: %w", file, err)
	}
	if _, err := diff.Compile(set.IgnoreAll()); err != nil {
		return nil, fmt.Errorf("--resource-customizations %s: resource.customizations.ignoreDifferences: %w", file, err)
	}
	if set.HasFilters() {
		return nil, fmt.Errorf("--resource-customizations %s: resource.exclusions and resource.inclusions are not applied by Ferry yet; remove them from the file given to Ferry", file)
	}
	return set, nil
}
