package main

import (
	"fmt"

	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/internal/controlns"
)

// newAppSetControl reads --control-namespace of the control cluster for
// the clusterDecisionResource and plugin generators; nil without one.
func newAppSetControl(cfg *config) (appset.Control, error) {
	ns := cfg.objects.namespace
	if ns == "" {
		return nil, nil
	}
	rc, err := controlConfig(cfg, cfg.objects.context)
	if err != nil {
		return nil, fmt.Errorf("control cluster (--control-context %q): %w", cfg.objects.context, err)
	}
	return controlns.New(rc, ns)
}
