package hooks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// DeletePolicy says when a hook object is deleted.
type DeletePolicy string

const (
	// BeforeHookCreation deletes the previous operation's object before the
	// hook is created again. It is the policy of a hook that names none.
	BeforeHookCreation DeletePolicy = "BeforeHookCreation"
	// HookSucceeded deletes the object once the hook succeeded.
	HookSucceeded DeletePolicy = "HookSucceeded"
	// HookFailed deletes the object once the hook failed.
	HookFailed DeletePolicy = "HookFailed"
)

var helmPolicies = map[string]DeletePolicy{
	"before-hook-creation": BeforeHookCreation,
	"hook-succeeded":       HookSucceeded,
	"hook-failed":          HookFailed,
}

// Hook is one rendered hook object and what its annotations say.
type Hook struct {
	// Object is the rendered object; never modified.
	Object *unstructured.Unstructured
	// Phases the hook runs in; empty for Skip and for Helm hooks without
	// a phase here.
	Phases []app.HookType
	// Wave orders the hooks of one phase: lower first, 0 by default.
	Wave int
	// Policies are its delete policies; never empty.
	Policies []DeletePolicy
}

// In tells whether the hook runs in phase p.
func (h Hook) In(p app.HookType) bool { return slices.Contains(h.Phases, p) }

// Has tells whether the hook has delete policy p.
func (h Hook) Has(p DeletePolicy) bool { return slices.Contains(h.Policies, p) }

// Parse reads obj's hook annotations. ok is false when obj is not a hook
// (syncplan.IsHook says the same). A phase, policy or wave that cannot be
// read is an error naming the annotation, so a typo never turns a hook into
// one that silently never runs.
func Parse(obj *unstructured.Unstructured) (h Hook, ok bool, err error) {
	ann := obj.GetAnnotations()
	argo, isArgo := ann[app.AnnotationHook]
	helm, isHelm := ann[app.AnnotationHelmHook]
	if !isArgo && !isHelm {
		return Hook{}, false, nil
	}
	h = Hook{Object: obj}
	if isArgo {
		for _, v := range splitList(argo) {
			p := app.HookType(v)
			if p != app.HookTypeSkip && !slices.Contains(app.HookTypes, p) {
				return h, true, fmt.Errorf("annotation %s: unknown phase %q: use PreSync, Sync, PostSync, SyncFail, PostDelete or Skip", app.AnnotationHook, v)
			}
			if p == app.HookTypeSkip {
				h.Phases = nil
				break
			}
			if !h.In(p) {
				h.Phases = append(h.Phases, p)
			}
		}
	} else {
		for _, v := range splitList(helm) {
			if p, known := app.HelmHookTypes[v]; known && !h.In(p) {
				h.Phases = append(h.Phases, p)
			}
		}
	}
	if h.Wave, err = wave(ann); err != nil {
		return h, true, err
	}
	if h.Policies, err = policies(ann); err != nil {
		return h, true, err
	}
	return h, true, nil
}

// wave reads argocd.argoproj.io/sync-wave, else helm.sh/hook-weight.
func wave(ann map[string]string) (int, error) {
	for _, key := range []string{app.AnnotationSyncWave, app.AnnotationHelmHookWeight} {
		v, ok := ann[key]
		if !ok {
			continue
		}
		w, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("annotation %s: %q is not an integer: write a number such as \"-1\" or \"2\"", key, v)
		}
		return w, nil
	}
	return 0, nil
}

// policies reads argocd.argoproj.io/hook-delete-policy, else Helm's.
func policies(ann map[string]string) ([]DeletePolicy, error) {
	var out []DeletePolicy
	if v, ok := ann[app.AnnotationHookDeletePolicy]; ok {
		for _, s := range splitList(v) {
			p := DeletePolicy(s)
			if p != BeforeHookCreation && p != HookSucceeded && p != HookFailed {
				return nil, fmt.Errorf("annotation %s: unknown policy %q: use BeforeHookCreation, HookSucceeded or HookFailed", app.AnnotationHookDeletePolicy, s)
			}
			out = appendPolicy(out, p)
		}
	} else if v, ok := ann[app.AnnotationHelmHookDeletePolicy]; ok {
		for _, s := range splitList(v) {
			p, known := helmPolicies[s]
			if !known {
				return nil, fmt.Errorf("annotation %s: unknown policy %q: use before-hook-creation, hook-succeeded or hook-failed", app.AnnotationHelmHookDeletePolicy, s)
			}
			out = appendPolicy(out, p)
		}
	}
	if len(out) == 0 {
		out = []DeletePolicy{BeforeHookCreation}
	}
	return out, nil
}

func appendPolicy(ps []DeletePolicy, p DeletePolicy) []DeletePolicy {
	if slices.Contains(ps, p) {
		return ps
	}
	return append(ps, p)
}

// Of parses the hooks among objs, in their order. Objects that are not
// hooks are left out; a hook that cannot be read is an error that names it.
func Of(objs []*unstructured.Unstructured) ([]Hook, error) {
	var out []Hook
	var errs []string
	for _, o := range objs {
		h, ok, err := Parse(o)
		if err != nil {
			errs = append(errs, describe(o)+": "+err.Error())
			continue
		}
		if ok {
			out = append(out, h)
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("hooks cannot be read: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// Count is the number of hooks per phase among objs, for a workflow to
// decide which phases to run: phases without hooks are absent.
func Count(objs []*unstructured.Unstructured) (map[string]int, error) {
	hs, err := Of(objs)
	if err != nil {
		return nil, err
	}
	var out map[string]int
	for _, h := range hs {
		for _, p := range h.Phases {
			if out == nil {
				out = map[string]int{}
			}
			out[string(p)]++
		}
	}
	return out, nil
}

// describe names a rendered object in messages: Kind/namespace/name, or
// Kind/generateName* for a hook named by its generateName.
func describe(o *unstructured.Unstructured) string {
	name := o.GetName()
	if name == "" {
		name = o.GetGenerateName() + "*"
	}
	if ns := o.GetNamespace(); ns != "" {
		return o.GetKind() + "/" + ns + "/" + name
	}
	return o.GetKind() + "/" + name
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
