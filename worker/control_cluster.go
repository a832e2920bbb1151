package main

import (
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ferry-gitops/ferry/internal/kube"
)

// controlClient is a client of the control cluster, where Argo CD's
// Secrets and ConfigMaps live (repository Secrets, notifications): the
// kubeconfig's context kubeContext (empty: its current context), or,
// with neither, the cluster the worker runs in.
func controlClient(cfg *config, kubeContext string) (kubernetes.Interface, error) {
	rc, err := controlConfig(cfg, kubeContext)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(rc)
}

// controlConfig is controlClient's configuration.
func controlConfig(cfg *config, kubeContext string) (*rest.Config, error) {
	if cfg.kubeconfig == "" && kubeContext == "" {
		return kube.InClusterConfig()
	}
	return kube.LoadConfig(cfg.kubeconfig, kubeContext)
}
