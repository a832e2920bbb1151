package health

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// crdChecks are the built-in checks for custom resources of common
// projects, by "group/Kind", each read from the status the project
// documents. Get consults them, then Crossplane's conditions, before the
// generic customHealth. An operator's Lua health script (Checker) still
// wins over all of them.
var crdChecks = map[string]func(*unstructured.Unstructured) (app.HealthStatusCode, string, error){
	"cert-manager.io/Certificate":        certificateHealth,
	"cert-manager.io/CertificateRequest": certificateRequestHealth,
	"cert-manager.io/Issuer":             issuerHealth,
	"cert-manager.io/ClusterIssuer":      issuerHealth,

	"argoproj.io/Rollout": rolloutHealth,

	"external-secrets.io/ExternalSecret":     externalSecretHealth,
	"external-secrets.io/SecretStore":        secretStoreHealth,
	"external-secrets.io/ClusterSecretStore": secretStoreHealth,

	"pkg.crossplane.io/Provider":      packageHealth,
	"pkg.crossplane.io/Configuration": packageHealth,

	"keda.sh/ScaledObject": scaledObjectHealth,
	"keda.sh/ScaledJob":    scaledJobHealth,

	"helm.toolkit.fluxcd.io/HelmRelease":        helmReleaseHealth,
	"kustomize.toolkit.fluxcd.io/Kustomization": kustomizationHealth,
	"source.toolkit.fluxcd.io/GitRepository":    fluxSourceHealth,
	"source.toolkit.fluxcd.io/HelmRepository":   fluxSourceHealth,
	"source.toolkit.fluxcd.io/OCIRepository":    fluxSourceHealth,

	"monitoring.coreos.com/Prometheus":   prometheusHealth,
	"monitoring.coreos.com/Alertmanager": prometheusHealth,

	"kafka.strimzi.io/Kafka":             kafkaHealth,
	"postgresql.cnpg.io/Cluster":         cnpgClusterHealth,
	"serving.knative.dev/Service":        knativeServiceHealth,
	"bitnami.com/SealedSecret":           sealedSecretHealth,
	"networking.istio.io/VirtualService": virtualServiceHealth,

	"gateway.networking.k8s.io/Gateway":   gatewayHealth,
	"gateway.networking.k8s.io/HTTPRoute": httpRouteHealth,
}

// crdCheck is the check for a kind Get's switch does not name: the
// built-in check of groupKind, else Crossplane's when obj reads as a
// Crossplane claim or managed resource (isCrossplane), else customHealth.
func crdCheck(groupKind string, obj *unstructured.Unstructured) func(*unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	if check, ok := crdChecks[groupKind]; ok {
		return check
	}
	if isCrossplane(obj) {
		return crossplaneHealth
	}
	return customHealth
}

// specNotObserved tells whether status.observedGeneration, where the kind
// writes it, is behind metadata.generation. Argo Rollouts and Istio write
// it as a string; a value that is not a number (an old Rollout's hash)
// says nothing.
func specNotObserved(obj *unstructured.Unstructured) bool {
	gen, _ := number(obj, "metadata", "generation")
	if observed, ok := number(obj, "status", "observedGeneration"); ok {
		return observed < gen
	}
	if s, ok, _ := unstructured.NestedString(obj.Object, "status", "observedGeneration"); ok {
		if observed, err := strconv.ParseInt(s, 10, 64); err == nil {
			return observed < gen
		}
	}
	return false
}

// stale tells whether a condition was written for an older generation of
// obj than the live one (metav1.Condition's observedGeneration).
func stale(obj *unstructured.Unstructured, c condition) bool {
	gen, _ := number(obj, "metadata", "generation")
	return c.ObservedGeneration > 0 && int64(c.ObservedGeneration) < gen
}

// isTrue reports whether conds has a condition typ with status True.
func isTrue(conds []condition, typ string) bool {
	c, ok := find(conds, typ)
	return ok && c.Status == "True"
}

// orWaiting is c.why() after prefix, or fallback when the condition is
// missing or says nothing.
func orWaiting(c condition, ok bool, prefix, fallback string) string {
	if !ok || c.why() == "" {
		return fallback
	}
	return prefix + c.why()
}

// withDetail is what, then ": " and detail when there is one.
func withDetail(what, detail string) string {
	if detail == "" {
		return what
	}
	return what + ": " + detail
}

// conditionHealth goes by one condition alone: True is Healthy, False
// Degraded ("<not>: reason"), none or Unknown Progressing ("<not> yet:
// reason", or waiting when it says nothing).
func conditionHealth(obj *unstructured.Unstructured, typ, not, waiting string) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	c, ok := find(conds, typ)
	switch {
	case ok && c.Status == "True":
		return app.HealthHealthy, "", nil
	case ok && c.Status == "False":
		return app.HealthDegraded, orWaiting(c, true, not+": ", not), nil
	}
	return app.HealthProgressing, orWaiting(c, ok, not+" yet: ", waiting), nil
}
