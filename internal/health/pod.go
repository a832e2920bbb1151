package health

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// stuckReasons are container waiting reasons that do not resolve without a
// change to the pod or its surroundings.
var stuckReasons = map[string]bool{
	"CrashLoopBackOff":           true,
	"ImagePullBackOff":           true,
	"ErrImagePull":               true,
	"InvalidImageName":           true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
}

// podHealth reads the pod phase. A pod that should keep running (restart
// policy Always) is Healthy once Ready; one that runs to completion is
// Healthy once Succeeded. A container stuck in a back-off makes it Degraded.
func podHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	var p corev1.Pod
	if err := fromUnstructured(obj, &p); err != nil {
		return "", "", err
	}
	switch p.Status.Phase {
	case corev1.PodSucceeded:
		return app.HealthHealthy, conditionMessage("", p.Status.Message, "pod completed"), nil
	case corev1.PodFailed:
		return app.HealthDegraded, conditionMessage(p.Status.Reason, p.Status.Message, "pod failed"), nil
	case corev1.PodPending, corev1.PodRunning:
		if msg, stuck := stuckContainer(p.Status); stuck {
			return app.HealthDegraded, msg, nil
		}
		if p.Status.Phase == corev1.PodPending {
			return app.HealthProgressing, conditionMessage(p.Status.Reason, p.Status.Message, "pod is pending"), nil
		}
		if p.Spec.RestartPolicy != corev1.RestartPolicyAlways && p.Spec.RestartPolicy != "" {
			return app.HealthProgressing, "pod is running", nil
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return app.HealthHealthy, "", nil
			}
		}
		return app.HealthProgressing, "pod is running but not ready", nil
	}
	return app.HealthUnknown, conditionMessage(p.Status.Reason, p.Status.Message, "pod state is unknown"), nil
}

func stuckContainer(st corev1.PodStatus) (string, bool) {
	all := append(append([]corev1.ContainerStatus{}, st.InitContainerStatuses...), st.ContainerStatuses...)
	for _, c := range all {
		if w := c.State.Waiting; w != nil && stuckReasons[w.Reason] {
			return fmt.Sprintf("container %q: %s", c.Name, conditionMessage(w.Reason, w.Message, "")), true
		}
	}
	return "", false
}
