package kube

import (
	"fmt"

	"k8s.io/client-go/rest"
)

// InClusterConfig is the config of the cluster a pod runs in (its service
// account), with the rate limits and user agent of LoadConfig. Callers use
// it explicitly when no kubeconfig was given, so a laptop's ~/.kube/config
// is never picked up by accident.
func InClusterConfig() (*rest.Config, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("no kubeconfig given and not in a pod (%w): give --kubeconfig, or run the worker in the region's cluster", err)
	}
	cfg.QPS = 100
	cfg.Burst = 200
	cfg.UserAgent = "ferry"
	return cfg, nil
}
