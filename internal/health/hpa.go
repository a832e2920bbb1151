package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// hpaConditionsAnnotation carries the conditions of an autoscaling/v1
// HorizontalPodAutoscaler, whose status has no field for them.
const hpaConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"

// hpaHealth reads the autoscaler's conditions: unable to scale, or unable
// to compute a scale (no metrics), is Degraded, as Argo CD shows it; able
// to scale is Healthy; no conditions yet is Progressing.
func hpaHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, ok, err := conditionsOf(obj)
	if !ok && err == nil {
		if v, found := obj.GetAnnotations()[hpaConditionsAnnotation]; found {
			var raw any
			if err := jsonUnmarshal(v, &raw); err == nil {
				conds, ok, err = decodeConditions(raw)
			}
		}
	}
	if err != nil {
		return "", "", err
	}
	if c, found := find(conds, "AbleToScale"); found && c.Status == "False" {
		return app.HealthDegraded, "cannot scale: " + c.why(), nil
	}
	if c, found := find(conds, "ScalingActive"); found && c.Status == "False" && c.Reason != "ScalingDisabled" {
		return app.HealthDegraded, "cannot compute a scale: " + c.why(), nil
	}
	if c, found := find(conds, "AbleToScale"); found && c.Status == "True" {
		return app.HealthHealthy, "", nil
	}
	return app.HealthProgressing, "waiting for the autoscaler", nil
}
