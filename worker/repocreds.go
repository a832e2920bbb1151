package main

import (
	"context"
	"fmt"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/gitsource"
)

// repoCredsFlags say where in the control cluster the repository Secrets are.
type repoCredsFlags struct {
	namespace string
	context   string
}

// repoCredsReadTimeout bounds reading the namespace at start.
const repoCredsReadTimeout = 30 * time.Second

// gitAuth is the worker's Git credentials: the repository Secrets (and CA
// certificates) of --repo-creds-dir and --repo-creds-namespace, then the
// FERRY_GIT_* credential.
func gitAuth(ctx context.Context, cfg *config) (gitsource.AuthProvider, error) {
	env, err := gitsource.NewEnvAuth()
	if err != nil {
		return nil, fmt.Errorf("git credentials: %w", err)
	}
	if cfg.repoCredsDir == "" && cfg.repoCreds.namespace == "" {
		return env, nil
	}
	var objs []gitsource.RepoCredObjects
	if cfg.repoCredsDir != "" {
		dirObjs, err := gitsource.ReadRepoCredsDir(cfg.repoCredsDir)
		if err != nil {
			return nil, fmt.Errorf("--repo-creds-dir %s: %w", cfg.repoCredsDir, err)
		}
		objs = append(objs, dirObjs...)
	}
	if ns := cfg.repoCreds.namespace; ns != "" {
		o, err := readRepoCredsNamespace(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("--repo-creds-namespace %s: %w", ns, err)
		}
		objs = append(objs, o)
	}
	rc, err := gitsource.NewRepoCreds(objs, os.Getenv(gitsource.EnvKnownHosts))
	if err != nil {
		return nil, err
	}
	rc.Fallback = env
	return rc, nil
}

// readRepoCredsNamespace lists the Secrets labelled as Argo CD repository
// Secrets in the namespace, and its argocd-tls-certs-cm if there is one.
func readRepoCredsNamespace(ctx context.Context, cfg *config) (gitsource.RepoCredObjects, error) {
	ns := cfg.repoCreds.namespace
	out := gitsource.RepoCredObjects{Source: "namespace " + ns}
	cs, err := controlClient(cfg, cfg.repoCreds.context)
	if err != nil {
		return out, err
	}
	ctx, cancel := context.WithTimeout(ctx, repoCredsReadTimeout)
	defer cancel()
	secrets, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: fmt.Sprintf("%s in (%s,%s)",
		gitsource.SecretTypeLabel, gitsource.SecretTypeRepo, gitsource.SecretTypeRepoCreds)})
	if err != nil {
		return out, fmt.Errorf("list the repository Secrets: %w", err)
	}
	out.Secrets = secrets.Items
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, gitsource.TLSCertsConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return out, fmt.Errorf("read ConfigMap %s: %w", gitsource.TLSCertsConfigMap, err)
	default:
		out.ConfigMaps = append(out.ConfigMaps, *cm)
	}
	return out, nil
}
