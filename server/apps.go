package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/rbac"
)

// appName is the app a request names: {name}, with ?appNamespace= (or a
// "namespace/name" name) for an app whose object is outside the control
// namespace.
func (s *server) appName(r *http.Request) string {
	name := r.PathValue("name")
	ns := r.URL.Query().Get("appNamespace")
	if ns == "" || ns == s.cfg.controlNamespace || strings.Contains(name, "/") {
		return name
	}
	return app.QualifiedName(ns, name)
}

// object is Argo CD's RBAC object of an app: project/name, or
// project/namespace/name outside the control namespace.
func object(project, appName string) string { return project + "/" + appName }

// appFor answers the app a request names when the caller may do action
// on it: nil after a 404, a 403 or another error was answered.
func (s *server) appFor(w http.ResponseWriter, r *http.Request, c *caller, action string, change bool) *contract.View {
	name := s.appName(r)
	v, err := ferryclient.Query(r.Context(), s.temporal, name)
	if ferryclient.IsAppNotFound(err) {
		fail(w, http.StatusNotFound, "application %q not found", name)
		return nil
	}
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "application %q: %v", name, err)
		return nil
	}
	if !s.authorize(w, c, rbac.Request{Resource: "applications", Action: action, Object: object(v.ProjectOf(), name)}, change) {
		return nil
	}
	return v
}

// readApp authenticates r and answers the app it names when the caller
// may get it: nils after a 401, 404, 403 or another error was answered.
func (s *server) readApp(w http.ResponseWriter, r *http.Request) (*caller, *contract.View) {
	c := s.authenticate(w, r)
	if c == nil {
		return nil, nil
	}
	return c, s.appFor(w, r, c, "get", false)
}

// shown is v as Argo CD's API shows an Application: metadata.name
// without its namespace, and metadata.namespace the object's.
func (s *server) shown(v *contract.View) *contract.View {
	out := *v
	ns, name := app.SplitName(v.Metadata.Name)
	if ns == "" {
		ns = s.cfg.controlNamespace
	}
	out.Metadata.Name, out.Metadata.Namespace = name, ns
	out.Owner = nil // Ferry's own, not Argo CD's Application
	if out.APIVersion == "" {
		out.APIVersion, out.Kind = "argoproj.io/v1alpha1", "Application"
	}
	return &out
}

// appGet is GET /api/v1/applications/{name}[?refresh=normal|hard].
func (s *server) appGet(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	v := s.appFor(w, r, c, "get", false)
	if v == nil {
		return
	}
	if mode := r.URL.Query().Get("refresh"); mode != "" {
		if mode != "normal" && mode != "hard" {
			fail(w, http.StatusBadRequest, "refresh=%q: write refresh=normal or refresh=hard", mode)
			return
		}
		if err := ferryclient.Refresh(r.Context(), s.temporal, v.Metadata.Name, mode == "hard"); err != nil {
			fail(w, http.StatusServiceUnavailable, "refresh application %q: %v", v.Metadata.Name, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, s.shown(v))
}

// appList is GET /api/v1/applications: the apps the caller may get, with
// Argo CD's filters projects (or project), selector, appNamespace and repo.
func (s *server) appList(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	items, status, err := s.visible(r.Context(), c, r.URL.Query())
	if err != nil {
		fail(w, status, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"metadata": map[string]any{}, "items": items})
}

// visible is the apps the caller may get that the filters of q select
// (projects or project, selector, appNamespace, repo, name), as shown.
func (s *server) visible(ctx context.Context, c *caller, q url.Values) ([]*contract.View, int, error) {
	projects := append(q["projects"], q["project"]...)
	sel, err := labels.Parse(q.Get("selector"))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("selector %q: %w", q.Get("selector"), err)
	}
	ns := q.Get("appNamespace")
	_, en := s.live.snapshot()
	var names []string
	sums := map[string]contract.Summary{}
	err = ferryclient.ListApps(ctx, s.temporal, func(name string, sum contract.Summary) {
		objNS := sum.Namespace
		if objNS == "" {
			objNS = s.cfg.controlNamespace
		}
		switch {
		case len(projects) > 0 && !slices.Contains(projects, sum.Project),
			ns != "" && ns != objNS,
			q.Get("name") != "" && q.Get("name") != name,
			q.Get("repo") != "" && !slices.Contains(sum.GitRepoURLs(), q.Get("repo")),
			!en.Allowed(c.who, rbac.Request{Resource: "applications", Action: "get", Object: object(sum.Project, name)}):
			return
		}
		names = append(names, name)
		sums[name] = sum
	})
	if err != nil {
		return nil, http.StatusServiceUnavailable, err
	}
	items := []*contract.View{}
	for _, v := range s.views(ctx, names, sums) {
		if v != nil && sel.Matches(labels.Set(v.Metadata.Labels)) &&
			en.Allowed(c.who, rbac.Request{Resource: "applications", Action: "get", Object: object(v.ProjectOf(), v.Metadata.Name)}) {
			items = append(items, s.shown(v))
		}
	}
	return items, http.StatusOK, nil
}
