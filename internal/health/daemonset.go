package health

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// daemonSetHealth waits for the pod on every scheduled node to be updated
// and available.
func daemonSetHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	var d appsv1.DaemonSet
	if err := fromUnstructured(obj, &d); err != nil {
		return "", "", err
	}
	if d.Status.ObservedGeneration < d.Generation {
		return app.HealthProgressing, "waiting for the daemonset controller to observe the latest spec", nil
	}
	st := d.Status
	if d.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType && st.UpdatedNumberScheduled < st.DesiredNumberScheduled {
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d of %d pods updated", st.UpdatedNumberScheduled, st.DesiredNumberScheduled), nil
	}
	if st.NumberAvailable < st.DesiredNumberScheduled {
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d of %d pods available", st.NumberAvailable, st.DesiredNumberScheduled), nil
	}
	return app.HealthHealthy, "", nil
}
