package health

// External Secrets Operator (external-secrets.io), as its API reference
// documents the status (https://external-secrets.io/latest/api/spec/): an
// ExternalSecret's Ready condition (reasons SecretSynced, SecretSyncedError,
// SecretDeleted, SecretMissing, ...); a SecretStore's or
// ClusterSecretStore's Ready condition (reasons Valid,
// InvalidStoreConfiguration, InvalidProviderConfig, ValidationFailed).
// Neither kind writes status.observedGeneration.

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// externalSecretHealth is Healthy while the secret is synced from its
// store, Degraded when the last sync failed (Ready=False, with the reason),
// and Progressing before the first sync.
func externalSecretHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	return readyHealth(obj, "secret is not synced", "waiting for the first sync of the secret")
}

// secretStoreHealth, for a SecretStore or a ClusterSecretStore, is Healthy
// while the operator could reach and validate the provider, Degraded when
// it could not (Ready=False), and Progressing until it has tried.
func secretStoreHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	return readyHealth(obj, "secret store is not ready", "waiting for the operator to validate the store")
}

// readyHealth goes by a Ready condition alone: True is Healthy, False
// Degraded ("<not>: reason"), none or Unknown Progressing ("<not> yet:
// reason", or waiting when it says nothing).
func readyHealth(obj *unstructured.Unstructured, not, waiting string) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	ready, ok := find(conds, "Ready")
	switch {
	case ok && ready.Status == "True":
		return app.HealthHealthy, "", nil
	case ok && ready.Status == "False":
		return app.HealthDegraded, orWaiting(ready, true, not+": ", not), nil
	}
	return app.HealthProgressing, orWaiting(ready, ok, not+" yet: ", waiting), nil
}
