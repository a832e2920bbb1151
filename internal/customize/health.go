package customize

import (
	"fmt"
	"slices"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// statuses are the health codes a script may return, as in Argo CD.
var statuses = []app.HealthStatusCode{
	app.HealthHealthy, app.HealthProgressing, app.HealthDegraded,
	app.HealthSuspended, app.HealthMissing, app.HealthUnknown,
}

// HasHealth tells whether a script decides the health of group/kind.
func (s *Set) HasHealth(group, kind string) bool {
	return s.lookup(group, kind, hasHealth) != nil
}

func hasHealth(o *override) bool { return o.health != nil }

// Health runs the health script for obj's group/kind, if the ConfigMap has
// one: its hs.status and hs.message become the object's health. ok is false
// when no script covers the kind. A script that fails, runs too long or
// returns a status Argo CD does not know makes the object Unknown, with
// the script and the reason in the message.
func (s *Set) Health(obj *unstructured.Unstructured) (code app.HealthStatusCode, message string, ok bool) {
	gvk := obj.GroupVersionKind()
	o := s.lookup(gvk.Group, gvk.Kind, hasHealth)
	if o == nil {
		return "", "", false
	}
	out, err := run(o.health, map[string]any{"obj": obj.Object})
	if err != nil {
		return app.HealthUnknown, fmt.Sprintf("health.lua of %s: %v", o.key, err), true
	}
	hs, isTable := out.(*lua.LTable)
	if !isTable {
		return app.HealthUnknown, fmt.Sprintf("health.lua of %s returned %s, want a table with status and message", o.key, out.Type()), true
	}
	code = app.HealthStatusCode(lua.LVAsString(hs.RawGetString("status")))
	if !slices.Contains(statuses, code) {
		return app.HealthUnknown, fmt.Sprintf("health.lua of %s returned status %q, want one of %v", o.key, code, statuses), true
	}
	return code, lua.LVAsString(hs.RawGetString("message")), true
}
