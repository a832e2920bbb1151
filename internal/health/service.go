package health

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// serviceHealth is Progressing for a LoadBalancer Service until the cloud
// provider has given it an address; every other Service is Healthy.
func serviceHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	var s corev1.Service
	if err := fromUnstructured(obj, &s); err != nil {
		return "", "", err
	}
	if s.Spec.Type == corev1.ServiceTypeLoadBalancer && len(s.Status.LoadBalancer.Ingress) == 0 {
		return app.HealthProgressing, "waiting for the load balancer to get an address", nil
	}
	return app.HealthHealthy, "", nil
}
