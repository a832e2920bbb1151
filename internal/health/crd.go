package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// crdHealth is Healthy once the API server serves the CRD (Established),
// Degraded when its names conflict with another's, Progressing before.
// A wave with a CRD waits on this before its custom resources are applied.
func crdHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	if c, ok := find(conds, "NamesAccepted"); ok && c.Status == "False" {
		return app.HealthDegraded, "names not accepted: " + c.why(), nil
	}
	if c, ok := find(conds, "Established"); ok && c.Status == "True" {
		return app.HealthHealthy, "", nil
	}
	return app.HealthProgressing, "waiting for the API server to establish the CustomResourceDefinition", nil
}
