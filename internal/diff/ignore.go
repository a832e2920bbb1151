package diff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Rules are an Application's spec.ignoreDifferences, compiled. The zero
// value and nil ignore nothing.
type Rules struct {
	rules  []rule
	digest string
}

type rule struct {
	group, kind, namespace, name string
	pointers                     [][]string
	jq                           []*gojq.Code
	jqSource                     []string
	paths                        []*gojq.Code // path(expr), for Respect
	managers                     map[string]bool
}

// Compile checks and compiles ignoreDifferences entries. Group, kind, name
// and namespace match as Argo CD's do, with shell globs ("*"); an empty
// group is the core group, an empty name or namespace matches any.
func Compile(entries []app.IgnoreDifference) (*Rules, error) {
	var errs []error
	r := &Rules{}
	for i, e := range entries {
		at := fmt.Sprintf("spec.ignoreDifferences[%d]", i)
		ru := rule{group: e.Group, kind: e.Kind, namespace: e.Namespace, name: e.Name}
		for _, pattern := range []string{e.Group, e.Kind, e.Namespace, e.Name} {
			if _, err := path.Match(pattern, ""); err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a valid glob pattern", at, pattern))
			}
		}
		for j, p := range e.JSONPointers {
			tokens, err := parsePointer(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.jsonPointers[%d]: %w", at, j, err))
				continue
			}
			ru.pointers = append(ru.pointers, tokens)
		}
		for j, expr := range e.JQPathExpressions {
			code, err := compileJQ(expr)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.jqPathExpressions[%d]: %w", at, j, err))
				continue
			}
			ru.jq = append(ru.jq, code)
			ru.jqSource = append(ru.jqSource, expr)
			if q, err := gojq.Parse("path(" + expr + ")"); err == nil {
				if paths, err := gojq.Compile(q); err == nil {
					ru.paths = append(ru.paths, paths)
				}
			}
		}
		if len(e.ManagedFieldsManagers) > 0 {
			ru.managers = map[string]bool{}
			for _, m := range e.ManagedFieldsManagers {
				ru.managers[m] = true
			}
		}
		r.rules = append(r.rules, ru)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(entries) > 0 {
		data, _ := json.Marshal(entries)
		sum := sha256.Sum256(data)
		r.digest = hex.EncodeToString(sum[:])
	}
	return r, nil
}

// Digest identifies the rules: equal rules have equal digests, and no
// rules have "". Caches of comparisons key on it.
func (r *Rules) Digest() string {
	if r == nil {
		return ""
	}
	return r.digest
}

// Empty tells whether the rules ignore nothing.
func (r *Rules) Empty() bool { return r == nil || len(r.rules) == 0 }

// matches tells whether the rule applies to obj (any side: the live one
// or the desired one, which have the same identity).
func (ru *rule) matches(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return glob(ru.group, gvk.Group, false) && glob(ru.kind, gvk.Kind, false) &&
		glob(ru.namespace, obj.GetNamespace(), true) && glob(ru.name, obj.GetName(), true)
}

func glob(pattern, value string, emptyMatchesAll bool) bool {
	if pattern == "" {
		return emptyMatchesAll || value == ""
	}
	ok, _ := path.Match(pattern, value)
	return ok
}

// Apply removes from the normalised contents sides (the live and the
// desired object's) what the rules ignore for the object ident names;
// owner is the live object, whose managedFields say which manager owns
// what. Fields an ignore leaves empty are removed with it, so an emptied
// map and a missing one compare equal.
func (r *Rules) Apply(ident, owner *unstructured.Unstructured, sides ...map[string]any) {
	if r.Empty() || ident == nil {
		return
	}
	for i := range r.rules {
		ru := &r.rules[i]
		if !ru.matches(ident) {
			continue
		}
		var owned []map[string]any
		if owner != nil && len(ru.managers) > 0 {
			owned = ownedFields(owner, ru.managers)
		}
		for _, side := range sides {
			if side == nil {
				continue
			}
			for _, p := range ru.pointers {
				removePointer(side, p)
			}
			for _, code := range ru.jq {
				removeJQ(side, code)
			}
			for _, tree := range owned {
				removeOwned(side, tree)
			}
		}
	}
}
