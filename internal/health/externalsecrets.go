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
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	ready, ok := find(conds, "Ready")
	switch {
	case ok && ready.Status == "True":
		return app.HealthHealthy, "", nil
	case ok && ready.Status == "False":
		return app.HealthDegraded, orWaiting(ready, true, "secret is not synced: ", "secret is not synced"), nil
	}
	return app.HealthProgressing, orWaiting(ready, ok, "secret is not synced yet: ", "waiting for the first sync of the secret"), nil
}

// secretStoreHealth, for a SecretStore or a ClusterSecretStore, is Healthy
// while the operator could reach and validate the provider, Degraded when
// it could not (Ready=False), and Progressing until it has tried.
func secretStoreHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	ready, ok := find(conds, "Ready")
	switch {
	case ok && ready.Status == "True":
		return app.HealthHealthy, "", nil
	case ok && ready.Status == "False":
		return app.HealthDegraded, orWaiting(ready, true, "secret store is not ready: ", "secret store is not ready"), nil
	}
	return app.HealthProgressing, orWaiting(ready, ok, "secret store is not ready yet: ", "waiting for the operator to validate the store"), nil
}
