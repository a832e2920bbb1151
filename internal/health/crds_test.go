package health

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

func TestGetCustomResources(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    app.HealthStatusCode
		msg     string
	}{
		{"certificate-ready", app.HealthHealthy, ""},
		{"certificate-issuing", app.HealthProgressing, "certificate is being issued: DoesNotExist"},
		{"certificate-failed", app.HealthDegraded, "certificate issuance failed: Failed: The certificate request has failed"},
		{"certificate-old-generation", app.HealthProgressing, "observe the latest spec"},
		{"certificaterequest-issued", app.HealthHealthy, ""},
		{"certificaterequest-pending", app.HealthProgressing, "certificate request is pending: Pending: Waiting on certificate issuance"},
		{"certificaterequest-unapproved", app.HealthProgressing, "to be approved"},
		{"certificaterequest-failed", app.HealthDegraded, "certificate request failed: Failed: Failed to wait for order"},
		{"certificaterequest-denied", app.HealthDegraded, "certificate request was denied: policy.cert-manager.io"},
		{"issuer-ready", app.HealthHealthy, ""},
		{"issuer-pending", app.HealthProgressing, "waiting for cert-manager to check the issuer"},
		{"issuer-failed", app.HealthDegraded, "issuer is not ready: ErrRegisterACMEAccount"},
		{"clusterissuer-ready", app.HealthHealthy, ""},
		{"clusterissuer-pending", app.HealthProgressing, "check the issuer"},
		{"clusterissuer-failed", app.HealthDegraded, "ErrRegisterACMEAccount: Failed to register ACME account"},

		{"rollout-healthy", app.HealthHealthy, ""},
		{"rollout-progressing", app.HealthProgressing, "rollout is progressing: more replicas need to be updated"},
		{"rollout-paused", app.HealthSuspended, "rollout is paused: CanaryPauseStep"},
		{"rollout-spec-paused", app.HealthSuspended, "rollout is paused"},
		{"rollout-degraded", app.HealthDegraded, "ProgressDeadlineExceeded"},
		{"rollout-aborted", app.HealthDegraded, "rollout aborted: RolloutAborted"},
		{"rollout-old-generation", app.HealthProgressing, "observe the latest spec"},
		{"rollout-no-phase", app.HealthProgressing, "1 of 3 replicas updated"},

		{"externalsecret-synced", app.HealthHealthy, ""},
		{"externalsecret-pending", app.HealthProgressing, "waiting for the first sync"},
		{"externalsecret-failed", app.HealthDegraded, "secret is not synced: SecretSyncedError: could not get secret data from provider"},
		{"secretstore-valid", app.HealthHealthy, ""},
		{"secretstore-pending", app.HealthProgressing, "validate the store"},
		{"secretstore-invalid", app.HealthDegraded, "secret store is not ready: InvalidProviderConfig"},
		{"clustersecretstore-valid", app.HealthHealthy, ""},
		{"clustersecretstore-pending", app.HealthProgressing, "validate the store"},
		{"clustersecretstore-invalid", app.HealthDegraded, "InvalidProviderConfig: unable to create client"},

		{"bucket-available", app.HealthHealthy, ""},
		{"bucket-creating", app.HealthProgressing, "not ready yet: Creating"},
		{"bucket-reconcile-error", app.HealthDegraded, "not synced: ReconcileError: create failed"},
		{"bucket-unavailable", app.HealthDegraded, "not available: Unavailable"},
		{"bucket-paused", app.HealthSuspended, "paused"},
		{"postgresqlinstance-ready", app.HealthHealthy, ""},
		{"postgresqlinstance-waiting", app.HealthProgressing, "Claim is waiting for composite resource"},
		{"postgresqlinstance-error", app.HealthDegraded, "no matching composition"},
		{"synced-ready-lookalike", app.HealthProgressing, "not ready yet: Waiting"},
		{"provider-healthy", app.HealthHealthy, ""},
		{"provider-unpacking", app.HealthProgressing, "package is not installed yet: UnpackingPackage"},
		{"provider-unhealthy", app.HealthDegraded, "package is not healthy: UnhealthyPackageRevision"},
		{"configuration-healthy", app.HealthHealthy, ""},
		{"configuration-unpacking", app.HealthProgressing, "UnpackingPackage"},
		{"configuration-unhealthy", app.HealthDegraded, "cannot resolve package dependencies"},

		{"scaledobject-ready", app.HealthHealthy, ""},
		{"scaledobject-pending", app.HealthProgressing, "waiting for KEDA to check the scaled object"},
		{"scaledobject-failed", app.HealthDegraded, "scaled object is not ready: ScaledObjectCheckFailed"},
		{"scaledobject-fallback", app.HealthDegraded, "fallback in use: FallbackExists"},
		{"scaledobject-paused", app.HealthSuspended, "scaled object is paused"},
		{"scaledjob-ready", app.HealthHealthy, ""},
		{"scaledjob-pending", app.HealthProgressing, "check the scaled job"},
		{"scaledjob-failed", app.HealthDegraded, "scaled job is not ready: ScaledJobCheckFailed"},
		{"scaledjob-paused", app.HealthSuspended, "scaled job is paused"},

		{"helmrelease-ready", app.HealthHealthy, ""},
		{"helmrelease-reconciling", app.HealthProgressing, "reconciling: Progressing: Fulfilling prerequisites"},
		{"helmrelease-failed", app.HealthDegraded, "helm release failed: InstallFailed"},
		{"helmrelease-dependency", app.HealthProgressing, "waiting for dependencies: DependencyNotReady"},
		{"helmrelease-suspended", app.HealthSuspended, "helm release is suspended"},
		{"kustomization-ready", app.HealthHealthy, ""},
		{"kustomization-old-generation", app.HealthProgressing, "observe the latest spec"},
		{"kustomization-failed", app.HealthDegraded, "kustomization failed: HealthCheckFailed"},
		{"kustomization-stalled", app.HealthDegraded, "kustomization is stalled: ArtifactFailed"},
		{"kustomization-suspended", app.HealthSuspended, "suspended"},
		{"gitrepository-ready", app.HealthHealthy, ""},
		{"gitrepository-reconciling", app.HealthProgressing, "building artifact"},
		{"gitrepository-failed", app.HealthDegraded, "source failed: GitOperationFailed"},
		{"gitrepository-suspended", app.HealthSuspended, "source is suspended"},
		{"helmrepository-ready", app.HealthHealthy, ""},
		{"helmrepository-reconciling", app.HealthProgressing, "reconciling"},
		{"helmrepository-failed", app.HealthDegraded, "IndexationFailed"},
		{"ocirepository-ready", app.HealthHealthy, ""},
		{"ocirepository-reconciling", app.HealthProgressing, "reconciling"},
		{"ocirepository-failed", app.HealthDegraded, "MANIFEST_UNKNOWN"},

		{"prometheus-available", app.HealthHealthy, ""},
		{"prometheus-degraded-replicas", app.HealthProgressing, "1 of 2 replicas available: SomePodsNotReady"},
		{"prometheus-not-reconciled", app.HealthDegraded, "not reconciled: ReconciliationFailed"},
		{"prometheus-paused", app.HealthSuspended, "paused"},
		{"alertmanager-available", app.HealthHealthy, ""},
		{"alertmanager-unavailable", app.HealthProgressing, "0 of 3 replicas available: NoPodReady"},
		{"alertmanager-old-generation", app.HealthProgressing, "observe the latest spec"},
		{"alertmanager-not-reconciled", app.HealthDegraded, "missing route"},

		{"kafka-ready", app.HealthHealthy, ""},
		{"kafka-creating", app.HealthProgressing, "kafka cluster is being created"},
		{"kafka-error", app.HealthDegraded, "kafka cluster is not ready: InvalidResourceException"},
		{"kafka-old-generation", app.HealthProgressing, "observe the latest spec"},
		{"kafka-paused", app.HealthSuspended, "paused"},

		{"cluster-healthy", app.HealthHealthy, ""},
		{"cluster-creating-replica", app.HealthProgressing, "Creating a new replica: Creating replica orders-db-2-join"},
		{"cluster-unrecoverable", app.HealthDegraded, "needs manual intervention: Missing primary PVC"},
		{"cluster-hibernated", app.HealthSuspended, "hibernated"},
		{"cluster-no-status", app.HealthProgressing, "waiting for CloudNativePG"},

		{"service-knative-ready", app.HealthHealthy, ""},
		{"service-knative-deploying", app.HealthProgressing, "service is not ready yet: RevisionMissing"},
		{"service-knative-failed", app.HealthDegraded, "service is not ready: RevisionFailed"},
		{"service-knative-old-generation", app.HealthProgressing, "observe the latest spec"},

		{"virtualservice-valid", app.HealthHealthy, ""},
		{"virtualservice-warning", app.HealthHealthy, "validation warning: IST0131"},
		{"virtualservice-error", app.HealthDegraded, "validation error: IST0101"},
		{"virtualservice-stale-error", app.HealthProgressing, "analyse the latest spec"},

		{"gateway-programmed", app.HealthHealthy, ""},
		{"gateway-pending", app.HealthProgressing, "gateway is not programmed yet: Pending"},
		{"gateway-no-address", app.HealthProgressing, "AddressNotAssigned"},
		{"gateway-invalid", app.HealthDegraded, "gateway is not accepted: ListenersNotValid"},
		{"gateway-old-generation", app.HealthProgressing, "observe the latest spec"},
		{"httproute-accepted", app.HealthHealthy, ""},
		{"httproute-pending", app.HealthProgressing, "waiting for a gateway to accept the route"},
		{"httproute-not-allowed", app.HealthDegraded, `not accepted by gateway "public": NotAllowedByListeners`},
		{"httproute-backend-not-found", app.HealthDegraded, `gateway "public" cannot resolve the route's references: BackendNotFound`},

		{"sealedsecret-synced", app.HealthHealthy, ""},
		{"sealedsecret-pending", app.HealthProgressing, "unseal the secret"},
		{"sealedsecret-failed", app.HealthDegraded, "secret cannot be unsealed: no key could decrypt secret"},
		{"sealedsecret-old-generation", app.HealthProgressing, "observe the latest spec"},
	} {
		t.Run(tc.fixture, func(t *testing.T) { assertHealth(t, tc.fixture, tc.want, tc.msg) })
	}
}

// TestEveryCRDCheckHasFixtures checks that each kind of the table has at
// least one fixture in testdata.
func TestEveryCRDCheckHasFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		obj := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal(data, &obj.Object), f)
		gvk := obj.GroupVersionKind()
		seen[gvk.Group+"/"+gvk.Kind] = true
	}
	for groupKind := range crdChecks {
		assert.True(t, seen[groupKind], "no fixture of %s", groupKind)
	}
}

// certificateScript stands for an operator's Lua health check of
// cert-manager Certificates.
type certificateScript struct{}

func (certificateScript) Health(obj *unstructured.Unstructured) (app.HealthStatusCode, string, bool) {
	if obj.GroupVersionKind().Group != "cert-manager.io" || obj.GetKind() != "Certificate" {
		return "", "", false
	}
	return app.HealthSuspended, "the operator's script says so", true
}

func TestCheckerCustomWinsOverBuiltIn(t *testing.T) {
	read := func(fixture string) *unstructured.Unstructured {
		data, err := os.ReadFile(filepath.Join("testdata", fixture+".yaml"))
		require.NoError(t, err)
		obj := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal(data, &obj.Object))
		return obj
	}
	c := Checker{Custom: certificateScript{}}

	code, msg := c.Get(read("certificate-failed"))
	assert.Equal(t, app.HealthSuspended, code)
	assert.Equal(t, "the operator's script says so", msg)

	// A kind the script leaves alone keeps its built-in check.
	code, msg = c.Get(read("issuer-failed"))
	assert.Equal(t, app.HealthDegraded, code)
	assert.Contains(t, msg, "ErrRegisterACMEAccount")
}
