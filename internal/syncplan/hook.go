package syncplan

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Phase is a phase of a sync operation.
type Phase string

// The phases of a sync, in order; Skip is not a phase but a hook value that
// keeps an object out of every phase.
const (
	PhasePreSync  Phase = "PreSync"
	PhaseSync     Phase = "Sync"
	PhasePostSync Phase = "PostSync"
	PhaseSyncFail Phase = "SyncFail"
	PhaseSkip     Phase = "Skip"
)

// helmPhases maps Helm hook names onto phases. Helm's test and rollback
// hooks have no Argo CD phase: such an object is a hook that never runs.
var helmPhases = map[string]Phase{
	"pre-install":  PhasePreSync,
	"pre-upgrade":  PhasePreSync,
	"post-install": PhasePostSync,
	"post-upgrade": PhasePostSync,
}

// Hook returns the phases a hook object runs in, and whether obj is a hook
// at all. Argo CD's annotation wins over Helm's, as in Argo CD. A hook with
// an unknown phase name is still a hook (with no phase Ferry runs), so it
// is never applied as an ordinary object by mistake.
func Hook(obj *unstructured.Unstructured) (phases []Phase, isHook bool) {
	ann := obj.GetAnnotations()
	if v, ok := ann[app.AnnotationHook]; ok {
		for _, p := range splitList(v) {
			phases = append(phases, Phase(p))
		}
		return phases, true
	}
	if v, ok := ann[app.AnnotationHelmHook]; ok {
		for _, h := range splitList(v) {
			if p, ok := helmPhases[h]; ok && !containsPhase(phases, p) {
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

func containsPhase(ps []Phase, p Phase) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}
