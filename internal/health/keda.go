package health

// KEDA (keda.sh/v1alpha1), as its documentation describes the status of
// scaled objects and jobs (https://keda.sh/docs/latest/reference/scaledobject-spec/
// and the ScaledObject and ScaledJob API types): the conditions Ready,
// Active, Fallback (ScaledObject only) and Paused. Neither kind writes
// status.observedGeneration.

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// scaledObjectHealth is Suspended while autoscaling is paused, Degraded
// when KEDA cannot scale the target (Ready=False) or its scalers fail and
// the fallback replica count is in use, Healthy once Ready, and Progressing
// before.
func scaledObjectHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	return kedaHealth(obj, "scaled object")
}

// scaledJobHealth is scaledObjectHealth for a ScaledJob, which has no
// fallback.
func scaledJobHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	return kedaHealth(obj, "scaled job")
}

func kedaHealth(obj *unstructured.Unstructured, what string) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	if c, ok := find(conds, "Paused"); ok && c.Status == "True" {
		return app.HealthSuspended, orWaiting(c, true, what+" is paused: ", what+" is paused"), nil
	}
	ready, hasReady := find(conds, "Ready")
	if hasReady && ready.Status == "False" {
		return app.HealthDegraded, orWaiting(ready, true, what+" is not ready: ", what+" is not ready"), nil
	}
	if c, ok := find(conds, "Fallback"); ok && c.Status == "True" {
		return app.HealthDegraded, orWaiting(c, true, "scalers are failing, fallback in use: ", "scalers are failing, fallback in use"), nil
	}
	if hasReady && ready.Status == "True" {
		return app.HealthHealthy, "", nil
	}
	return app.HealthProgressing, orWaiting(ready, hasReady, what+" is not ready yet: ", "waiting for KEDA to check the "+what), nil
}
