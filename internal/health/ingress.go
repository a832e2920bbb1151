package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// ingressHealth is Progressing until the ingress controller has published
// an address for the Ingress, as in Argo CD. (A cluster without an ingress
// controller keeps its Ingresses Progressing.)
func ingressHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	lbs, _, err := unstructured.NestedSlice(obj.Object, "status", "loadBalancer", "ingress")
	if err != nil {
		return "", "", err
	}
	if len(lbs) == 0 {
		return app.HealthProgressing, "waiting for the ingress controller to publish an address", nil
	}
	return app.HealthHealthy, "", nil
}
