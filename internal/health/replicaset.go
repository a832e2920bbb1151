package health

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// replicaSetHealth is Degraded when the controller cannot create pods (quota,
// admission) and Progressing until every desired replica is available.
func replicaSetHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	var r appsv1.ReplicaSet
	if err := fromUnstructured(obj, &r); err != nil {
		return "", "", err
	}
	if r.Status.ObservedGeneration < r.Generation {
		return app.HealthProgressing, "waiting for the replicaset controller to observe the latest spec", nil
	}
	for _, c := range r.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			return app.HealthDegraded, c.Message, nil
		}
	}
	desired := replicas(r.Spec.Replicas)
	if r.Status.AvailableReplicas < desired {
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d of %d replicas available", r.Status.AvailableReplicas, desired), nil
	}
	return app.HealthHealthy, "", nil
}
