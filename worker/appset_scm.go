package main

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/internal/appset"
)

// Argo CD's label of the Secrets a tokenRef may name (its strict mode,
// which Ferry always applies: a set's author cannot send any other Secret
// of the namespace to an API URL of their choice).
const (
	secretTypeLabel    = "argocd.argoproj.io/secret-type"
	secretTypeSCMCreds = "scm-creds"
)

// appSetSCM reaches the providers of the pullRequest and scmProvider
// generators: through the host policy of --render-allow-hosts, with the
// tokens their tokenRef names in the control namespace
// (--control-namespace), read when a generator runs and never kept.
func appSetSCM(cfg *config) *appset.SCMClients {
	ns := cfg.objects.namespace
	client := sync.OnceValues(func() (kubernetes.Interface, error) { return controlClient(cfg, cfg.objects.context) })
	token := func(ctx context.Context, ref appset.SecretRef) (string, error) {
		if ns == "" {
			return "", fmt.Errorf("Secret %q: this worker has no control namespace to read it from: start the control worker with --control-namespace (FERRY_CONTROL_NAMESPACE) and create the Secret there", ref.SecretName)
		}
		cs, err := client()
		if err != nil {
			return "", fmt.Errorf("Secret %q: reach the control cluster: %w", ref.SecretName, err)
		}
		s, err := cs.CoreV1().Secrets(ns).Get(ctx, ref.SecretName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return "", fmt.Errorf("Secret %q not found in namespace %s: create it there, labelled %s: %s, with the token under key %q",
				ref.SecretName, ns, secretTypeLabel, secretTypeSCMCreds, ref.Key)
		case err != nil:
			return "", fmt.Errorf("read Secret %q of namespace %s: %w", ref.SecretName, ns, err)
		case s.Labels[secretTypeLabel] != secretTypeSCMCreds:
			return "", fmt.Errorf("Secret %q of namespace %s is not labelled %s: %s: label it so (Argo CD's tokenRef strict mode, which Ferry always applies) if it holds the token for this generator",
				ref.SecretName, ns, secretTypeLabel, secretTypeSCMCreds)
		}
		v, ok := s.Data[ref.Key]
		if !ok {
			return "", fmt.Errorf("Secret %q of namespace %s has no key %q: put the token under that key, or name its key in tokenRef.key", ref.SecretName, ns, ref.Key)
		}
		return string(v), nil
	}
	return &appset.SCMClients{Token: token, Hosts: cfg.render.hosts}
}
