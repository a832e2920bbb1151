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
	return conditionHealth(obj, "Ready", "secret is not synced", "waiting for the first sync of the secret")
}

// secretStoreHealth, for a SecretStore or a ClusterSecretStore, is Healthy
// while the operator could reach and validate the provider, Degraded when
// it could not (Ready=False), and Progressing until it has tried.
func secretStoreHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	return conditionHealth(obj, "Ready", "secret store is not ready", "waiting for the operator to validate the store")
}
