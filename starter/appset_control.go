package main

import (
	"fmt"
	"os"

	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/internal/controlns"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// appSetControl reads FERRY_CONTROL_NAMESPACE of the control cluster
// (context FERRY_CONTROL_CONTEXT) for the clusterDecisionResource and
// plugin generators of ferry appset generate, with the user's kubeconfig,
// as the workers read it; nil without the namespace.
func appSetControl() (appset.Control, error) {
	ns, kubeContext := os.Getenv("FERRY_CONTROL_NAMESPACE"), os.Getenv("FERRY_CONTROL_CONTEXT")
	if ns == "" {
		return nil, nil
	}
	rc, err := kube.LoadConfig(os.Getenv("KUBECONFIG"), kubeContext)
	if err != nil {
		return nil, fmt.Errorf("the control cluster (FERRY_CONTROL_CONTEXT %q): %w", kubeContext, err)
	}
	return controlns.New(rc, ns)
}
