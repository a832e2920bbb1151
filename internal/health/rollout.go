package health

// Argo Rollouts (argoproj.io/v1alpha1 Rollout), as its specification
// documents the status (https://argo-rollouts.readthedocs.io/en/stable/features/specification/):
// status.phase (Healthy, Progressing, Paused, Degraded) and status.message,
// which the controller writes since v1.0; status.abort,
// status.pauseConditions and status.controllerPause; status.replicas,
// updatedReplicas and availableReplicas; status.observedGeneration, a
// string.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// rolloutHealth takes the controller's phase when it writes one, else
// counts replicas as for a Deployment. A spec not yet observed is
// Progressing, an aborted update Degraded, a paused rollout (spec.paused,
// or a pause step or analysis waiting) Suspended.
func rolloutHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	if specNotObserved(obj) {
		return app.HealthProgressing, "waiting for the rollout controller to observe the latest spec", nil
	}
	message, _, _ := unstructured.NestedString(obj.Object, "status", "message")
	if aborted, _, _ := unstructured.NestedBool(obj.Object, "status", "abort"); aborted {
		return app.HealthDegraded, withDetail("rollout aborted", message), nil
	}
	if paused, _, _ := unstructured.NestedBool(obj.Object, "spec", "paused"); paused {
		return app.HealthSuspended, "rollout is paused", nil
	}
	pauses, _, _ := unstructured.NestedSlice(obj.Object, "status", "pauseConditions")
	if len(pauses) > 0 {
		reason := ""
		if p, ok := pauses[0].(map[string]any); ok {
			reason, _ = p["reason"].(string)
		}
		return app.HealthSuspended, withDetail("rollout is paused", reason), nil
	}
	if cp, _, _ := unstructured.NestedBool(obj.Object, "status", "controllerPause"); cp {
		return app.HealthSuspended, "rollout is paused by the controller", nil
	}
	switch phase, _, _ := unstructured.NestedString(obj.Object, "status", "phase"); phase {
	case "Healthy":
		return app.HealthHealthy, "", nil
	case "Degraded":
		return app.HealthDegraded, withDetail("rollout is degraded", message), nil
	case "Paused":
		return app.HealthSuspended, withDetail("rollout is paused", message), nil
	case "Progressing":
		return app.HealthProgressing, withDetail("rollout is progressing", message), nil
	}
	desired, found := number(obj, "spec", "replicas")
	if !found {
		desired = 1
	}
	current, _ := number(obj, "status", "replicas")
	updated, _ := number(obj, "status", "updatedReplicas")
	available, _ := number(obj, "status", "availableReplicas")
	switch {
	case updated < desired:
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d of %d replicas updated", updated, desired), nil
	case current > updated:
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d old replicas pending termination", current-updated), nil
	case available < updated:
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d of %d updated replicas available", available, updated), nil
	}
	return app.HealthHealthy, "", nil
}
