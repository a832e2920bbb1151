package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// apiServiceHealth is Healthy once the aggregated API is Available;
// Progressing (with the reason, such as an unreachable backend) before, as
// in Argo CD.
func apiServiceHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	c, ok := find(conds, "Available")
	if ok && c.Status == "True" {
		return app.HealthHealthy, "", nil
	}
	if ok {
		return app.HealthProgressing, "not available: " + c.why(), nil
	}
	return app.HealthProgressing, "waiting for the aggregated API to become available", nil
}
