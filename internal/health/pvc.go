package health

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// pvcHealth is Healthy once the claim is bound to a volume, Degraded when
// its volume is lost.
func pvcHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	var c corev1.PersistentVolumeClaim
	if err := fromUnstructured(obj, &c); err != nil {
		return "", "", err
	}
	switch c.Status.Phase {
	case corev1.ClaimBound:
		return app.HealthHealthy, "", nil
	case corev1.ClaimLost:
		return app.HealthDegraded, "claim lost its volume", nil
	}
	return app.HealthProgressing, "waiting for the claim to be bound", nil
}
