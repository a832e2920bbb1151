package syncplan

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Hook returns the phases a hook object runs in, and whether obj is a hook
// at all. Argo CD's annotation wins over Helm's, as in Argo CD. A hook with
// an unknown phase name is still a hook (with no phase Ferry runs), so it
// is never applied as an ordinary object by mistake.
func Hook(obj *unstructured.Unstructured) (phases []app.HookType, isHook bool) {
	ann := obj.GetAnnotations()
	if v, ok := ann[app.AnnotationHook]; ok {
		for _, p := range splitList(v) {
			phases = append(phases, app.HookType(p))
		}
		return phases, true
	}
	if v, ok := ann[app.AnnotationHelmHook]; ok {
		for _, h := range splitList(v) {
			if p, ok := app.HelmHookTypes[h]; ok && !slices.Contains(phases, p) {
				phases = append(phases, p)
			}
		}
		return phases, true
	}
	return nil, false
}

// IsHook tells whether obj is a hook, which the Sync phase's apply, compare
// and prune leave to the hook runner.
func IsHook(obj *unstructured.Unstructured) bool {
	_, hook := Hook(obj)
	return hook
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
