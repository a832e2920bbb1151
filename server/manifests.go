package main

import (
	"encoding/json"
	"net/http"
	"sort"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regionlive"
	corev1 "k8s.io/api/core/v1"
)

// appManifests is GET /api/v1/applications/{name}/manifests: Argo CD's
// ManifestResponse of the app's target, the manifests its workers rendered
// (handed over, never rendered here), Secret values masked. ?revision= may
// name the target (its commit or the spec's revision): the server renders
// no other; ferry app manifests --revision does, where Git is at hand.
func (s *server) appManifests(w http.ResponseWriter, r *http.Request) {
	_, v := s.readApp(w, r)
	if v == nil {
		return
	}
	t, objs, err := s.targetObjects(r.Context(), v)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	if rev := r.URL.Query().Get("revision"); rev != "" && rev != t.SHA && rev != t.Commit() && rev != v.Spec.Source.Revision() {
		fail(w, http.StatusBadRequest, "revision %q: ferry-server shows the manifests of application %q's target, %s, only; ferry app manifests %s --revision %s renders another",
			rev, v.Metadata.Name, t.Commit(), v.Metadata.Name, rev)
		return
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		b, err := json.Marshal(masked(o))
		if err != nil {
			fail(w, http.StatusInternalServerError, "application %q: %v", v.Metadata.Name, err)
			return
		}
		out = append(out, string(b))
	}
	writeJSON(w, http.StatusOK, map[string]any{"manifests": out, "namespace": t.Namespace, "revision": t.Commit(),
		"sourceType": v.Status.SourceType})
}

// resourceEvents answers GET …/events?resourceName=&resourceNamespace=
// [&resourceUID=]: the Events of one of the app's objects, from each
// region (or ?region=) where the app has it.
func (s *server) resourceEvents(w http.ResponseWriter, r *http.Request) {
	_, v := s.readApp(w, r)
	if v == nil {
		return
	}
	dests := s.destinations(w, r, v)
	if dests == nil {
		return
	}
	found := false
	q := r.URL.Query()
	ref := resourceRef{Namespace: q.Get("resourceNamespace"), ResourceName: q.Get("resourceName"), Kind: q.Get("resourceKind"), Group: q.Get("resourceGroup")}
	items := []corev1.Event{}
	for _, d := range dests {
		rg := s.region(w, v, d.Region)
		if rg == nil {
			return
		}
		for _, k := range eventsObjects(r, rg, managedIn(v, d.Region), ref) {
			found = true
			evs, err := rg.Events(r.Context(), k.Namespace, k.Name, q.Get("resourceUID"))
			if err != nil {
				fail(w, http.StatusServiceUnavailable, "application %q: the events of %s %s in region %s: %v", v.Metadata.Name, k.Kind, k.Name, d.Region, err)
				return
			}
			items = append(items, evs...)
		}
	}
	if !found {
		fail(w, http.StatusNotFound, "application %q has no resource %q in namespace %q: see its resource-tree", v.Metadata.Name, ref.ResourceName, ref.Namespace)
		return
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].LastTimestamp.Before(&items[j].LastTimestamp) })
	writeJSON(w, http.StatusOK, map[string]any{"metadata": map[string]any{}, "items": items})
}

// eventsObjects are the objects whose events are asked: the app's own of
// that name (gone or not), as Argo CD matches them; with Ferry's
// resourceKind (and resourceGroup), one of them or one of what they own
// (a ReplicaSet, a Pod).
func eventsObjects(r *http.Request, rg *regionlive.Region, managed []app.ResourceKey, ref resourceRef) []app.ResourceKey {
	var out []app.ResourceKey
	for _, k := range managed {
		if k.Name == ref.ResourceName && !narrowed(ref.Namespace, k.Namespace) && !narrowed(ref.Kind, k.Kind) && (ref.Kind == "" || k.Group == ref.Group) {
			out = append(out, k)
		}
	}
	if len(out) > 0 || ref.Kind == "" {
		return out
	}
	if k, ok := inTree(r.Context(), rg, managed, ref); ok {
		out = append(out, k)
	}
	return out
}
