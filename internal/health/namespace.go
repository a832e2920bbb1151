package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// namespaceHealth is Healthy while the namespace is Active, Progressing
// while it terminates.
func namespaceHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	phase, _, err := unstructured.NestedString(obj.Object, "status", "phase")
	if err != nil {
		return "", "", err
	}
	if phase == "Terminating" {
		return app.HealthProgressing, "namespace is terminating", nil
	}
	return app.HealthHealthy, "", nil
}
