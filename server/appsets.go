package main

import (
	"errors"
	"net/http"
	"slices"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/rbac"
)

// An ApplicationSet is authorized as Argo CD authorizes it: applicationsets
// on PROJECT/NAME, the project its template names.

// appSetProject is the project of the set's template, as written.
func appSetProject(v *contract.AppSetView) string {
	if p, ok := v.Spec.Template.Spec["project"].(string); ok && p != "" {
		return p
	}
	return "default"
}

// shownAppSet is v as Argo CD's API shows an ApplicationSet.
func (s *server) shownAppSet(v *contract.AppSetView) *contract.AppSetView {
	out := *v
	if out.Metadata.Namespace == "" {
		out.Metadata.Namespace = s.cfg.controlNamespace
	}
	out.APIVersion, out.Kind = "argoproj.io/v1alpha1", "ApplicationSet"
	return &out
}

// appSetList is GET /api/v1/applicationsets[?projects=]: the sets the
// caller may get, as Argo CD's ApplicationSetList.
func (s *server) appSetList(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	sums, err := ferryclient.ListAppSets(r.Context(), s.temporal)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "list the applicationsets: %v", err)
		return
	}
	projects := append(r.URL.Query()["projects"], r.URL.Query()["project"]...)
	_, en := s.live.snapshot()
	items := []*contract.AppSetView{}
	for _, sum := range sums {
		v, err := ferryclient.GetAppSet(r.Context(), s.temporal, sum.Name)
		if err != nil {
			continue // deleted since the list
		}
		p := appSetProject(v)
		if (len(projects) == 0 || slices.Contains(projects, p)) &&
			en.Allowed(c.who, rbac.Request{Resource: "applicationsets", Action: "get", Object: object(p, sum.Name)}) {
			items = append(items, s.shownAppSet(v))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"metadata": map[string]any{}, "items": items})
}

// appSetGet is GET /api/v1/applicationsets/{name}.
func (s *server) appSetGet(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	name := r.PathValue("name")
	v, err := ferryclient.GetAppSet(r.Context(), s.temporal, name)
	var nf *contract.AppSetNotFoundError
	switch {
	case errors.As(err, &nf):
		fail(w, http.StatusNotFound, "applicationset %q not found", name)
		return
	case err != nil:
		fail(w, http.StatusServiceUnavailable, "applicationset %q: %v", name, err)
		return
	}
	if s.authorize(w, c, rbac.Request{Resource: "applicationsets", Action: "get", Object: object(appSetProject(v), name)}, false) {
		writeJSON(w, http.StatusOK, s.shownAppSet(v))
	}
}
