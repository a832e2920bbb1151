package main

import (
	"context"
	"net/http"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/rbac"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

// canI is GET /api/v1/account/can-i/{resource}/{action}/{object}: {"value":
// "yes"} or "no", as Argo CD answers it, for the caller. The web UI offers
// only the buttons it allows; the server decides every request anyway.
func (s *server) canI(w http.ResponseWriter, r *http.Request) {
	c := s.authenticate(w, r)
	if c == nil {
		return
	}
	_, en := s.live.snapshot()
	d := en.Decide(c.who, rbac.Request{Resource: r.PathValue("resource"), Action: r.PathValue("action"), Object: r.PathValue("object")})
	value := "no"
	if d.Allowed {
		value = "yes"
	}
	writeJSON(w, http.StatusOK, map[string]string{"value": value})
}

// appResource is GET /api/v1/applications/{name}/resource?namespace=
// &resourceName=&kind=&group=[&region=]: one object of the app's resource
// tree as it runs (Argo CD's ApplicationResourceResponse, {manifest}),
// Secret values masked. Only an object of the app's tree is shown.
func (s *server) appResource(w http.ResponseWriter, r *http.Request) {
	_, v := s.readApp(w, r)
	if v == nil {
		return
	}
	ref := refOf(r.URL.Query().Get)
	rg, k := s.treeObject(w, r, v, ref)
	if rg == nil {
		return
	}
	obj, err := rg.Get(r.Context(), k)
	if err != nil {
		fail(w, http.StatusServiceUnavailable, "application %q: %s %s in region %s: %v", v.Metadata.Name, kindOf(k.Group, k.Kind), k.Name, rg.Name, err)
		return
	}
	if obj == nil {
		fail(w, http.StatusNotFound, "application %q: %s %s is gone from region %s", v.Metadata.Name, kindOf(k.Group, k.Kind), k.Name, rg.Name)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"manifest": jsonText(masked(obj))})
}

// treeObject finds the object ref names in the app's resource tree, in the
// first region (or ?region=) that has it; nil after a 404 or a 503.
func (s *server) treeObject(w http.ResponseWriter, r *http.Request, v *contract.View, ref resourceRef) (*regionlive.Region, app.ResourceKey) {
	dests := s.destinations(w, r, v)
	if dests == nil {
		return nil, app.ResourceKey{}
	}
	for _, d := range dests {
		rg := s.region(w, v, d.Region)
		if rg == nil {
			return nil, app.ResourceKey{}
		}
		if k, ok := inTree(r.Context(), rg, managedIn(v, d.Region), ref); ok {
			return rg, k
		}
	}
	fail(w, http.StatusNotFound, "application %q has no %s %s in namespace %q: see its resource-tree", v.Metadata.Name, kindOf(ref.Group, ref.Kind), ref.ResourceName, ref.Namespace)
	return nil, app.ResourceKey{}
}

// inTree finds ref among the app's objects in a region, then in what
// they own.
func inTree(ctx context.Context, rg *regionlive.Region, managed []app.ResourceKey, ref resourceRef) (app.ResourceKey, bool) {
	is := func(group, kind, ns, name string) bool {
		return kind == ref.Kind && group == ref.Group && name == ref.ResourceName && !narrowed(ref.Namespace, ns)
	}
	for _, k := range managed {
		if is(k.Group, k.Kind, k.Namespace, k.Name) {
			return k, true
		}
	}
	nodes, _ := rg.Tree(ctx, managed) // a partial tree still answers for what it holds
	for _, n := range nodes {
		if is(n.Group, n.Kind, n.Namespace, n.Name) {
			return app.ResourceKey{Group: n.Group, Version: n.Version, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name}, true
		}
	}
	return app.ResourceKey{}, false
}

// masked is obj's content with a Secret's values masked and its last
// applied copy dropped; other objects as they are, without managedFields.
func masked(obj *unstructured.Unstructured) map[string]any {
	obj = obj.DeepCopy()
	obj.SetManagedFields(nil)
	if gvk := obj.GroupVersionKind(); diff.IsSecret(gvk.Group, gvk.Kind) {
		ann := obj.GetAnnotations()
		delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
		obj.SetAnnotations(ann)
		diff.MaskSecret(obj.Object)
	}
	return obj.Object
}
