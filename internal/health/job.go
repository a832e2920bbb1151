package health

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// jobHealth is Healthy once the job completed, Degraded once it failed (with
// the controller's reason), Suspended while spec.suspend holds, and
// Progressing until then.
func jobHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	var j batchv1.Job
	if err := fromUnstructured(obj, &j); err != nil {
		return "", "", err
	}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			return app.HealthDegraded, conditionMessage(c.Reason, c.Message, "job failed"), nil
		case batchv1.JobComplete:
			return app.HealthHealthy, conditionMessage("", c.Message, "job completed"), nil
		}
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return app.HealthSuspended, "job is suspended", nil
	}
	return app.HealthProgressing, "job is running", nil
}

// conditionMessage joins a condition's reason and message, or returns
// fallback when both are empty.
func conditionMessage(reason, message, fallback string) string {
	switch {
	case reason != "" && message != "":
		return reason + ": " + message
	case message != "":
		return message
	case reason != "":
		return reason
	}
	return fallback
}
