package health

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Get returns the health of a live object and a short message saying why.
// A nil object is Missing. An object being deleted is Progressing. A kind
// Ferry has no health check for goes by its Ready and Stalled conditions
// when it has them (customHealth), else it is Healthy; the custom resources
// of common projects have their own checks first (crds.go). An object whose
// fields cannot be read as its kind's type is Unknown, with the reason.
func Get(obj *unstructured.Unstructured) (app.HealthStatusCode, string) {
	if obj == nil {
		return app.HealthMissing, "object does not exist"
	}
	if obj.GetDeletionTimestamp() != nil {
		return app.HealthProgressing, "pending deletion"
	}
	gvk := obj.GroupVersionKind()
	var check func(*unstructured.Unstructured) (app.HealthStatusCode, string, error)
	switch gvk.Group + "/" + gvk.Kind {
	case "apps/Deployment":
		check = deploymentHealth
	case "apps/StatefulSet":
		check = statefulSetHealth
	case "apps/DaemonSet":
		check = daemonSetHealth
	case "apps/ReplicaSet":
		check = replicaSetHealth
	case "batch/Job":
		check = jobHealth
	case "/Pod":
		check = podHealth
	case "/Service":
		check = serviceHealth
	case "/PersistentVolumeClaim":
		check = pvcHealth
	case "/Namespace":
		check = namespaceHealth
	case "networking.k8s.io/Ingress", "extensions/Ingress":
		check = ingressHealth
	case "autoscaling/HorizontalPodAutoscaler":
		check = hpaHealth
	case "apiextensions.k8s.io/CustomResourceDefinition":
		check = crdHealth
	case "apiregistration.k8s.io/APIService":
		check = apiServiceHealth
	default:
		check = crdCheck(gvk.Group+"/"+gvk.Kind, obj)
	}
	code, msg, err := check(obj)
	if err != nil {
		return app.HealthUnknown, fmt.Sprintf("%s/%s: %v", gvk.Kind, obj.GetName(), err)
	}
	return code, msg
}

// fromUnstructured reads obj as the typed object out. The typed API structs
// are the single source of field names and defaults; every served version of
// the kinds checked here has the same shape, so one function per kind covers
// them all.
func fromUnstructured(obj *unstructured.Unstructured, out any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.UnstructuredContent(), out); err != nil {
		return fmt.Errorf("read %s: %w", obj.GetKind(), err)
	}
	return nil
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
