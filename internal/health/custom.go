package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Custom decides the health of the kinds it covers, as Argo CD's Lua health
// checks do (package customize); ok is false for a kind it leaves to Get.
type Custom interface {
	Health(obj *unstructured.Unstructured) (code app.HealthStatusCode, message string, ok bool)
}

// Checker is Get with an operator's customizations consulted first. Its
// zero value is Get. As in Argo CD, an object being deleted is Progressing
// whatever a script would say, and a missing one Missing.
type Checker struct {
	Custom Custom
}

// Get returns the health of a live object and why.
func (c Checker) Get(obj *unstructured.Unstructured) (app.HealthStatusCode, string) {
	if c.Custom != nil && obj != nil && obj.GetDeletionTimestamp() == nil {
		if code, msg, ok := c.Custom.Health(obj); ok {
			return code, msg
		}
	}
	return Get(obj)
}
