package health

// Single kinds of other projects, each from the status its project
// documents:
//   - Prometheus Operator (monitoring.coreos.com/v1 Prometheus and
//     Alertmanager, https://prometheus-operator.dev/docs/api-reference/api/):
//     spec.paused; the conditions Available (True, Degraded or False) and
//     Reconciled; status.replicas and availableReplicas.
//   - Strimzi (kafka.strimzi.io Kafka, https://strimzi.io/docs/operators/latest/configuring#type-KafkaStatus-reference):
//     the conditions Ready, NotReady (reason Creating while it deploys, the
//     error's name otherwise) and ReconciliationPaused;
//     status.observedGeneration.
//   - CloudNativePG (postgresql.cnpg.io/v1 Cluster, https://cloudnative-pg.io/documentation/current/cloudnative-pg.v1/#postgresql-cnpg-io-v1-ClusterStatus):
//     status.phase and phaseReason; the conditions Ready and
//     cnpg.io/hibernation.
//   - Knative Serving (serving.knative.dev/v1 Service, https://knative.dev/docs/serving/reference/serving-api/):
//     the condition Ready (Unknown while it deploys); status.observedGeneration.
//   - Istio (networking.istio.io VirtualService, https://istio.io/latest/docs/reference/config/config-status/):
//     status.validationMessages[] with level and type.code, written when
//     analysis is on; status.observedGeneration, a string.
//   - Sealed Secrets (bitnami.com/v1alpha1 SealedSecret, the controller's
//     README): the condition Synced; status.observedGeneration.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// prometheusHealth, for a Prometheus or an Alertmanager, is Suspended while
// spec.paused holds, Degraded when the operator failed to reconcile it,
// Healthy while Available, and Progressing while some replicas are not
// available (as for the StatefulSets it runs on).
func prometheusHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	if paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); paused {
		return app.HealthSuspended, "reconciliation is paused", nil
	}
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	reconciled, hasReconciled := find(conds, "Reconciled")
	available, hasAvailable := find(conds, "Available")
	switch {
	case !hasReconciled && !hasAvailable:
		return app.HealthProgressing, "waiting for the operator to report", nil
	case stale(obj, reconciled) || stale(obj, available):
		return app.HealthProgressing, "waiting for the operator to observe the latest spec", nil
	case reconciled.Status == "False":
		return app.HealthDegraded, orWaiting(reconciled, true, "not reconciled: ", "not reconciled"), nil
	case available.Status == "True":
		return app.HealthHealthy, "", nil
	}
	want, _ := number(obj, "status", "replicas")
	got, _ := number(obj, "status", "availableReplicas")
	return app.HealthProgressing, withDetail(fmt.Sprintf("%d of %d replicas available", got, want), available.why()), nil
}

// kafkaHealth is Suspended while reconciliation is paused, Progressing
// until the operator observed the latest spec and while the cluster is
// created, Degraded when the operator reports an error, and Healthy once
// Ready.
func kafkaHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	if c, ok := find(conds, "ReconciliationPaused"); ok && c.Status == "True" {
		return app.HealthSuspended, "reconciliation is paused", nil
	}
	if specNotObserved(obj) {
		return app.HealthProgressing, "waiting for the Strimzi operator to observe the latest spec", nil
	}
	if isTrue(conds, "Ready") {
		return app.HealthHealthy, "", nil
	}
	if c, ok := find(conds, "NotReady"); ok && c.Status == "True" {
		if c.Reason == "Creating" {
			return app.HealthProgressing, orWaiting(c, true, "kafka cluster is being created: ", "kafka cluster is being created"), nil
		}
		return app.HealthDegraded, orWaiting(c, true, "kafka cluster is not ready: ", "kafka cluster is not ready"), nil
	}
	return app.HealthProgressing, "waiting for the Strimzi operator to deploy the cluster", nil
}

// cnpgFailing are the Cluster phases CloudNativePG leaves for a person to
// act on; every other phase is a step it takes by itself.
var cnpgFailing = map[string]bool{
	"Cluster is unrecoverable and needs manual intervention":                                  true,
	"Cluster is in an unrecoverable state, needs manual intervention":                         true,
	"Unable to create required cluster objects":                                               true,
	"Cluster has incomplete or invalid image catalog":                                         true,
	"Cluster cannot execute instance online upgrade due to missing architecture binary":       true,
	"Cluster cannot proceed to reconciliation due to an unknown plugin being required":        true,
	"Cluster cannot proceed to reconciliation due to an error while interacting with plugins": true,
	"Waiting for user action": true,
}

// cnpgClusterHealth is Suspended while hibernated, Healthy in the phase
// "Cluster in healthy state" once Ready, Degraded in a phase that needs
// manual intervention, and Progressing in every other phase (a switchover,
// a new replica, an upgrade), with the phase and its reason.
func cnpgClusterHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	if isTrue(conds, "cnpg.io/hibernation") {
		return app.HealthSuspended, "cluster is hibernated", nil
	}
	phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase")
	reason, _, _ := unstructured.NestedString(obj.Object, "status", "phaseReason")
	ready, hasReady := find(conds, "Ready")
	switch {
	case phase == "":
		return app.HealthProgressing, "waiting for CloudNativePG to set up the cluster", nil
	case cnpgFailing[phase]:
		return app.HealthDegraded, withDetail(phase, reason), nil
	case phase != "Cluster in healthy state":
		return app.HealthProgressing, withDetail(phase, reason), nil
	case hasReady && stale(obj, ready):
		return app.HealthProgressing, "waiting for CloudNativePG to observe the latest spec", nil
	case hasReady && ready.Status != "True":
		return app.HealthProgressing, orWaiting(ready, true, "cluster is not ready: ", "cluster is not ready"), nil
	}
	return app.HealthHealthy, "", nil
}

// knativeServiceHealth is Healthy once Ready, Degraded when Knative gave up
// on the latest revision or route (Ready=False), and Progressing until the
// spec is observed and while it deploys (Ready=Unknown).
func knativeServiceHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	if specNotObserved(obj) {
		return app.HealthProgressing, "waiting for Knative to observe the latest spec", nil
	}
	return conditionHealth(obj, "Ready", "service is not ready", "waiting for Knative to deploy the service")
}

// istioLevelError is the level of an analysis message that makes a
// VirtualService Degraded, as its name or its enum number.
func istioLevelError(level any) bool {
	switch l := level.(type) {
	case string:
		return l == "ERROR"
	case float64:
		return l == 3
	case int64:
		return l == 3
	}
	return false
}

// virtualServiceHealth is Degraded when Istio's analysis reports an error
// for the latest spec, and Healthy otherwise (warnings are named in the
// message). An error for an older spec is Progressing: analysis has yet to
// run on the latest.
func virtualServiceHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	msgs, _, err := unstructured.NestedSlice(obj.Object, "status", "validationMessages")
	if err != nil {
		return "", "", err
	}
	var errs, warnings []string
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		code, _, _ := unstructured.NestedString(msg, "type", "code")
		if name, _, _ := unstructured.NestedString(msg, "type", "name"); name != "" {
			code += " " + name
		}
		if istioLevelError(msg["level"]) {
			errs = append(errs, code)
		} else if msg["level"] == "WARNING" {
			warnings = append(warnings, code)
		}
	}
	switch {
	case len(errs) > 0 && specNotObserved(obj):
		return app.HealthProgressing, "waiting for Istio to analyse the latest spec", nil
	case len(errs) > 0:
		return app.HealthDegraded, fmt.Sprintf("validation error: %s", errs[0]), nil
	case len(warnings) > 0:
		return app.HealthHealthy, fmt.Sprintf("validation warning: %s", warnings[0]), nil
	}
	return app.HealthHealthy, "", nil
}

// sealedSecretHealth is Healthy once the controller unsealed the secret,
// Degraded when it cannot (Synced=False, such as no key to decrypt it), and
// Progressing before.
func sealedSecretHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	if specNotObserved(obj) {
		return app.HealthProgressing, "waiting for the controller to observe the latest spec", nil
	}
	synced, ok := find(conds, "Synced")
	switch {
	case ok && synced.Status == "True":
		return app.HealthHealthy, "", nil
	case ok && synced.Status == "False":
		return app.HealthDegraded, orWaiting(synced, true, "secret cannot be unsealed: ", "secret cannot be unsealed"), nil
	}
	return app.HealthProgressing, "waiting for the controller to unseal the secret", nil
}
