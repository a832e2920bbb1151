package main

import (
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
	"github.com/ferry-gitops/ferry/internal/rbac"
)

// appUpdate is PUT /api/v1/applications/{name}: the Application of the
// body becomes the app's spec, as Argo CD's update: the caller must be
// allowed to update the app in its project and in the project the body
// names. An app of an Application object is updated as the object (its
// spec, labels and annotations), any other through its workflow; a spec
// with problems is refused with every problem, and nothing changes.
func (s *server) appUpdate(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<20))
	if err != nil {
		fail(w, http.StatusBadRequest, "read the body: %v", err)
		return
	}
	v := s.appFor(w, r, c, "update", true)
	if v == nil {
		return
	}
	a, err := app.Read(body, app.ValidateOptions{})
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	ns, bare := app.SplitName(v.Metadata.Name)
	if a.Metadata.Name != bare {
		fail(w, http.StatusBadRequest, "application %q: metadata.name of the body is %q: a PUT changes the app it names, not another", v.Metadata.Name, a.Metadata.Name)
		return
	}
	a.Qualify(ns)
	if a.ProjectOf() != v.ProjectOf() && !s.authorize(w, c, rbac.Request{Resource: "applications", Action: "update", Object: object(a.ProjectOf(), v.Metadata.Name)}, true) {
		return
	}
	if err := ferryclient.CheckAppProject(r.Context(), s.temporal, a, nil); err != nil {
		fail(w, http.StatusBadRequest, "application %q: %v", v.Metadata.Name, err)
		return
	}
	if v.Owner != nil && v.Owner.Object != "" {
		err = s.updateObject(r, v.Owner.Object, body)
	} else {
		_, err = ferryclient.Apply(r.Context(), s.temporal, a, contract.SpecRequest{})
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "update application %q: %v", v.Metadata.Name, err)
		return
	}
	s.event(r, c, v, "ResourceUpdated", c.name()+" updated application spec")
	if nv, err := ferryclient.Query(r.Context(), s.temporal, v.Metadata.Name); err == nil {
		v = nv
	}
	writeJSON(w, http.StatusOK, s.shown(v))
}

// updateObject writes body's spec, labels and annotations to the
// Application object key ("namespace/name").
func (s *server) updateObject(r *http.Request, key string, body []byte) error {
	ns, name, _ := strings.Cut(key, "/")
	return appobjects.Update(r.Context(), s.dyn.Resource(appobjects.Applications).Namespace(ns), name, body, "ferry-server")
}

// appEvents is GET /api/v1/applications/{name}/events: the Events of the
// app's Application object (what was done to it, by whom); with
// ?resourceName=, those of one of its objects in the regions
// (resourceEvents).
func (s *server) appEvents(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("resourceName") != "" {
		s.resourceEvents(w, r)
		return
	}
	_, v := s.readApp(w, r)
	if v == nil {
		return
	}
	items := []corev1.Event{}
	if v.Owner != nil && v.Owner.Object != "" {
		ns, name, _ := strings.Cut(v.Owner.Object, "/")
		sel := fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.name", name), fields.OneTermEqualSelector("involvedObject.kind", "Application"))
		list, err := s.kube.CoreV1().Events(ns).List(r.Context(), metav1.ListOptions{FieldSelector: sel.String()})
		if err != nil {
			fail(w, http.StatusServiceUnavailable, "the events of application %q: %v", v.Metadata.Name, err)
			return
		}
		items = list.Items
	}
	writeJSON(w, http.StatusOK, map[string]any{"metadata": map[string]any{}, "items": items})
}
