package customize

import (
	"fmt"
	"sort"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// actionSet is resource.customizations.actions.<group_kind>.
type actionSet struct {
	discovery   *lua.FunctionProto
	definitions map[string]*lua.FunctionProto
	names       []string // in the file's order
}

type actionsFile struct {
	Discovery   string `json:"discovery.lua,omitempty"`
	Definitions []struct {
		Name   string `json:"name"`
		Action string `json:"action.lua"`
	} `json:"definitions"`
	MergeBuiltinActions bool `json:"mergeBuiltinActions,omitempty"`
}

func parseActions(key, value string, fail func(string, string, ...any)) *actionSet {
	var f actionsFile
	if err := yaml.UnmarshalStrict([]byte(value), &f); err != nil {
		fail(key, "not {discovery.lua, definitions: [{name, action.lua}]}: %v", err)
		return nil
	}
	set := &actionSet{definitions: map[string]*lua.FunctionProto{}}
	if f.Discovery != "" {
		set.discovery = compile(key+" discovery.lua", f.Discovery, fail)
	}
	for i, d := range f.Definitions {
		where := fmt.Sprintf("%s definitions[%d]", key, i)
		switch {
		case d.Name == "":
			fail(key, "definitions[%d].name is empty; name the action", i)
		case set.definitions[d.Name] != nil:
			fail(key, "definitions[%d]: action %q is defined twice", i, d.Name)
		case d.Action == "":
			fail(key, "definitions[%d] (%s): action.lua is empty", i, d.Name)
		default:
			set.definitions[d.Name] = compile(where+" action.lua", d.Action, fail)
			set.names = append(set.names, d.Name)
		}
	}
	return set
}

// Action is one action a user may run on an object.
type Action struct {
	Name        string `json:"name"`
	Disabled    bool   `json:"disabled,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	IconClass   string `json:"iconClass,omitempty"`
}

// Impacted is one object an action changes: the object as the action
// leaves it and what to do with it, "patch" (the default) or "create".
type Impacted struct {
	Operation string
	Object    *unstructured.Unstructured
}

func hasActions(o *override) bool { return o.actions != nil }

// Actions lists the actions of obj's kind: those its discovery.lua returns
// for obj, or every definition when there is no discovery script.
func (s *Set) Actions(obj *unstructured.Unstructured) ([]Action, error) {
	gvk := obj.GroupVersionKind()
	o := s.lookup(gvk.Group, gvk.Kind, hasActions)
	if o == nil {
		return nil, nil
	}
	if o.actions.discovery == nil {
		out := make([]Action, 0, len(o.actions.names))
		for _, n := range o.actions.names {
			out = append(out, Action{Name: n})
		}
		return out, nil
	}
	v, err := run(o.actions.discovery, map[string]any{"obj": obj.Object})
	if err != nil {
		return nil, fmt.Errorf("discovery.lua of %s: %w", o.key, err)
	}
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("discovery.lua of %s returned %s, want a table of actions by name", o.key, v.Type())
	}
	var out []Action
	t.ForEach(func(k, e lua.LValue) {
		a := Action{Name: k.String()}
		if et, ok := e.(*lua.LTable); ok {
			a.Disabled = lua.LVAsBool(et.RawGetString("disabled"))
			a.DisplayName = lua.LVAsString(et.RawGetString("displayName"))
			a.IconClass = lua.LVAsString(et.RawGetString("iconClass"))
		}
		out = append(out, a)
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RunAction runs the action named on obj (a copy; obj is not changed) with
// params as the script's actionParams, and returns the objects it changes.
// An action discovery lists as disabled, or that no definition has, is
// refused by name.
func (s *Set) RunAction(obj *unstructured.Unstructured, name string, params map[string]string) ([]Impacted, error) {
	gvk := obj.GroupVersionKind()
	o := s.lookup(gvk.Group, gvk.Kind, hasActions)
	what := fmt.Sprintf("%s %s", gvk.Kind, obj.GetName())
	if o == nil || o.actions.definitions[name] == nil {
		return nil, fmt.Errorf("%s has no action %q: define it under resource.customizations.actions.%s", what, name, splitKey(gvk.Group, gvk.Kind))
	}
	listed, err := s.Actions(obj)
	if err != nil {
		return nil, err
	}
	for _, a := range listed {
		if a.Name == name && a.Disabled {
			return nil, fmt.Errorf("action %q is disabled for %s (its discovery.lua says so)", name, what)
		}
	}
	globals := map[string]any{"obj": obj.DeepCopy().Object}
	if len(params) > 0 {
		p := map[string]any{}
		for k, v := range params {
			p[k] = v
		}
		globals["actionParams"] = p
	}
	v, err := run(o.actions.definitions[name], globals)
	if err != nil {
		return nil, fmt.Errorf("action %q of %s: %w", name, o.key, err)
	}
	return impacted(v, obj, name)
}

// impacted reads an action's result: the changed object itself, or (Argo
// CD 2.8 and later) a list of {operation, resource}.
func impacted(v lua.LValue, obj *unstructured.Unstructured, name string) ([]Impacted, error) {
	t, ok := v.(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("action %q returned %s, want the changed object", name, v.Type())
	}
	if t.MaxN() == 0 {
		changed, ok := fromLua(t, obj.Object).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("action %q returned a list, want the changed object", name)
		}
		return []Impacted{{Operation: "patch", Object: &unstructured.Unstructured{Object: changed}}}, nil
	}
	var out []Impacted
	for i := 1; i <= t.MaxN(); i++ {
		entry, ok := t.RawGetInt(i).(*lua.LTable)
		if !ok {
			return nil, fmt.Errorf("action %q: result [%d] is not {operation, resource}", name, i)
		}
		op := lua.LVAsString(entry.RawGetString("operation"))
		if op == "" {
			op = "patch"
		}
		if op != "patch" && op != "create" {
			return nil, fmt.Errorf("action %q: result [%d] has operation %q, want patch or create", name, i, op)
		}
		res, ok := fromLua(entry.RawGetString("resource"), obj.Object).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("action %q: result [%d] has no resource object", name, i)
		}
		out = append(out, Impacted{Operation: op, Object: &unstructured.Unstructured{Object: res}})
	}
	return out, nil
}

func splitKey(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "_" + kind
}
