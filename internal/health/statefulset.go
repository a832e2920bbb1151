package health

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// statefulSetHealth waits for every desired replica to be ready and, for a
// rolling update, for the replicas above the partition to run the update
// revision.
func statefulSetHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	var s appsv1.StatefulSet
	if err := fromUnstructured(obj, &s); err != nil {
		return "", "", err
	}
	if s.Status.ObservedGeneration < s.Generation {
		return app.HealthProgressing, "waiting for the statefulset controller to observe the latest spec", nil
	}
	desired := replicas(s.Spec.Replicas)
	st := s.Status
	if st.ReadyReplicas < desired {
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d of %d replicas ready", st.ReadyReplicas, desired), nil
	}
	if s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		// Pods are replaced only when someone deletes them: nothing to wait for.
		return app.HealthHealthy, "", nil
	}
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && *ru.Partition > 0 {
		want := desired - *ru.Partition
		if st.UpdatedReplicas < want {
			return app.HealthProgressing, fmt.Sprintf("waiting for partitioned rollout: %d of %d replicas updated", st.UpdatedReplicas, want), nil
		}
		return app.HealthHealthy, fmt.Sprintf("partitioned rollout complete: %d replicas updated", st.UpdatedReplicas), nil
	}
	if st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision {
		return app.HealthProgressing, fmt.Sprintf("waiting for rollout: %d of %d replicas updated", st.UpdatedReplicas, desired), nil
	}
	return app.HealthHealthy, "", nil
}
