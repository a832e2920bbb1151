package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/customize"
	"github.com/ferry-gitops/ferry/internal/rbac"
)

// resourceRef names one of an app's objects as Argo CD's action requests
// do: namespace, resourceName, kind, group (version is not needed).
type resourceRef struct {
	Namespace    string `json:"namespace"`
	ResourceName string `json:"resourceName"`
	Kind         string `json:"kind"`
	Group        string `json:"group"`
}

func refOf(get func(string) string) resourceRef {
	return resourceRef{Namespace: get("namespace"), ResourceName: get("resourceName"), Kind: get("kind"), Group: get("group")}
}

// regionKey is one of the app's objects in one region.
type regionKey struct {
	region string
	key    app.ResourceKey
}

// resourceTargets are the app's objects ref names, in each region (or
// ?region=); none answers 404, a ref without kind or resourceName 400.
func (s *server) resourceTargets(w http.ResponseWriter, r *http.Request, v *contract.View, ref resourceRef) []regionKey {
	if ref.Kind == "" || ref.ResourceName == "" {
		fail(w, http.StatusBadRequest, "name the resource with kind and resourceName (and group and namespace), e.g. ?kind=Deployment&group=apps&resourceName=web")
		return nil
	}
	dests := s.destinations(w, r, v)
	if dests == nil {
		return nil
	}
	var out []regionKey
	for _, d := range dests {
		for _, k := range managedIn(v, d.Region) {
			if k.Kind == ref.Kind && k.Name == ref.ResourceName && k.Group == ref.Group && !narrowed(ref.Namespace, k.Namespace) {
				out = append(out, regionKey{d.Region, k})
			}
		}
	}
	if len(out) == 0 {
		fail(w, http.StatusNotFound, "application %q has no %s %s in namespace %q: see its resource-tree", v.Metadata.Name, kindOf(ref.Group, ref.Kind), ref.ResourceName, ref.Namespace)
	}
	return out
}

func kindOf(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}

// resourceActions is GET /api/v1/applications/{name}/resource/actions:
// the actions of one of the app's objects, as Argo CD's
// ResourceActionsListResponse; the built-in restart and argocd-cm's Lua
// actions, of the first region that has it (or ?region=).
func (s *server) resourceActions(w http.ResponseWriter, r *http.Request) {
	_, v := s.readApp(w, r)
	if v == nil {
		return
	}
	targets := s.resourceTargets(w, r, v, refOf(r.URL.Query().Get))
	if targets == nil {
		return
	}
	set, err := customize.FromData(s.live.configMap("argocd-cm"))
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "argocd-cm: %v", err)
		return
	}
	t := targets[0]
	rg := s.region(w, v, t.region)
	if rg == nil {
		return
	}
	acts, err := rg.Actions(r.Context(), set, t.key)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "application %q: the actions of %s %s in region %s: %v", v.Metadata.Name, kindOf(t.key.Group, t.key.Kind), t.key.Name, t.region, err)
		return
	}
	out := make([]map[string]any, 0, len(acts))
	for _, a := range acts {
		out = append(out, map[string]any{"name": a.Name, "disabled": a.Disabled})
	}
	writeJSON(w, http.StatusOK, map[string]any{"actions": out})
}

// runActionBody is what POST …/resource/actions takes: Argo CD's body,
// the action's name as a JSON string, or the object of its /v2 path (the
// resource, the action and its parameters).
type runActionBody struct {
	resourceRef
	Action     string `json:"action"`
	Parameters []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"resourceActionParameters"`
}

func (b *runActionBody) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &b.Action); err == nil {
		return nil
	}
	type plain runActionBody
	return json.Unmarshal(data, (*plain)(b))
}

// runResourceAction is POST /api/v1/applications/{name}/resource/actions
// (and …/v2): runs an action on one of the app's objects in each region
// that has it (or ?region=). It needs applications
// action/GROUP/KIND/ACTION on the app, as in Argo CD.
func (s *server) runResourceAction(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	var body runActionBody
	if !readJSON(w, r, &body) {
		return
	}
	if body.Action == "" {
		fail(w, http.StatusBadRequest, `name the action: the body is its name as a JSON string ("restart"), or an object with "action"`)
		return
	}
	q := r.URL.Query()
	ref := refOf(func(k string) string { return firstOf(q.Get(k), body.field(k)) })
	v := s.appFor(w, r, c, "get", false)
	if v == nil {
		return
	}
	// Argo CD's form: action/GROUP/KIND/ACTION, the core group empty.
	act := rbac.Request{Resource: "applications", Action: "action/" + ref.Group + "/" + ref.Kind + "/" + body.Action, Object: object(v.ProjectOf(), v.Metadata.Name)}
	if !s.authorize(w, c, act, true) {
		return
	}
	targets := s.resourceTargets(w, r, v, ref)
	if targets == nil {
		return
	}
	set, err := customize.FromData(s.live.configMap("argocd-cm"))
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "argocd-cm: %v", err)
		return
	}
	params := map[string]string{}
	for _, p := range body.Parameters {
		params[p.Name] = p.Value
	}
	var errs []error
	results := []actionResult{}
	for _, t := range targets {
		rg := s.region(w, v, t.region)
		if rg == nil {
			return
		}
		what := fmt.Sprintf("%s %s in region %s", kindOf(t.key.Group, t.key.Kind), t.key.Name, t.region)
		done, err := rg.RunAction(r.Context(), set, t.key, body.Action, params)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			continue
		}
		s.event(r, c, v, "ResourceActionRan", fmt.Sprintf("%s ran action %s on %s: %s", c.name(), body.Action, what, strings.Join(done, ", ")))
		results = append(results, actionResult{Region: t.region, Group: t.key.Group, Kind: t.key.Kind, Namespace: t.key.Namespace, Name: t.key.Name, Done: done})
	}
	if len(errs) > 0 {
		fail(w, http.StatusBadRequest, "application %q: action %q: %v", v.Metadata.Name, body.Action, errors.Join(errs...))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
}

// actionResult is what an action did to an object in a region: Ferry's,
// beside Argo CD's empty answer.
type actionResult struct {
	Region    string   `json:"region"`
	Group     string   `json:"group,omitempty"`
	Kind      string   `json:"kind"`
	Namespace string   `json:"namespace,omitempty"`
	Name      string   `json:"name"`
	Done      []string `json:"done"`
}

// field is one of the body's resource fields, by its query name.
func (b *runActionBody) field(name string) string {
	fields := map[string]string{"namespace": b.Namespace, "resourceName": b.ResourceName, "kind": b.Kind, "group": b.Group}
	return fields[name]
}
