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
// when it has them (customHealth), else it is Healthy. An object whose
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
		check = customHealth
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

// severity orders health codes from best to worst, as Argo CD does, so that
// an application's health is its worst resource's.
var severity = map[app.HealthStatusCode]int{
	app.HealthHealthy:     0,
	app.HealthSuspended:   1,
	app.HealthProgressing: 2,
	app.HealthMissing:     3,
	app.HealthDegraded:    4,
	app.HealthUnknown:     5,
}

// IsWorse tells whether a is a worse health than b. Unknown codes count as
// Unknown.
func IsWorse(a, b app.HealthStatusCode) bool {
	return rank(a) > rank(b)
}

// Worst returns the worst of codes, or Healthy when there are none. A code
// it does not know comes back as Unknown.
func Worst(codes ...app.HealthStatusCode) app.HealthStatusCode {
	worst := app.HealthHealthy
	for _, c := range codes {
		if _, known := severity[c]; !known {
			c = app.HealthUnknown
		}
		if IsWorse(c, worst) {
			worst = c
		}
	}
	return worst
}

func rank(c app.HealthStatusCode) int {
	if r, ok := severity[c]; ok {
		return r
	}
	return severity[app.HealthUnknown]
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
