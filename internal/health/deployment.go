package health

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// deploymentHealth follows the rollout the way `kubectl rollout status` does:
// the controller must have seen the latest spec, then every desired replica
// must be updated and available, and no old replica may be left.
func deploymentHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	var d appsv1.Deployment
	if err := fromUnstructured(obj, &d); err != nil {
		return "", "", err
	}
	if d.Status.ObservedGeneration < d.Generation {
		return app.HealthProgressing, "waiting for the deployment controller to observe the latest spec", nil
	}
	if d.Spec.Paused {
		return app.HealthSuspended, "deployment is paused", nil
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return app.HealthDegraded, fmt.Sprintf("deployment %q exceeded its progress deadline", d.Name), nil
		}
	}
	desired := replicas(d.Spec.Replicas)
	st := d.Status
	switch {
	case st.UpdatedReplicas < desired:
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d of %d replicas updated", st.UpdatedReplicas, desired), nil
	case st.Replicas > st.UpdatedReplicas:
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d old replicas pending termination", st.Replicas-st.UpdatedReplicas), nil
	case st.AvailableReplicas < st.UpdatedReplicas:
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d of %d updated replicas available", st.AvailableReplicas, st.UpdatedReplicas), nil
	}
	return app.HealthHealthy, "", nil
}

// replicas is a spec's replica count with the API server's default of 1.
func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}
