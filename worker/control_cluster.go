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
	var rc *rest.Config
	var err error
	if cfg.kubeconfig == "" && kubeContext == "" {
		rc, err = kube.InClusterConfig()
	} else {
		rc, err = kube.LoadConfig(cfg.kubeconfig, kubeContext)
	}
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(rc)
}
