package orphans

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// Clients read one region.
type Clients struct {
	Discovery discovery.DiscoveryInterface
	Dynamic   dynamic.Interface
}

// Request says whose orphans to find, and where.
type Request struct {
	// App is the app's name; Namespace its destination namespace in the
	// region.
	App, Namespace string
	// Managed are the app's resources in the region (its status').
	Managed []app.ResourceKey
	// Project is the app's AppProject.
	Project *app.AppProject
	// Running tells whether an app of that name runs: an object tracked
	// by a running app is that app's, never an orphan.
	Running func(name string) bool
	// Excluded tells whether a kind is left alone by resource.exclusions
	// and inclusions; nil excludes nothing more than Argo CD's own.
	Excluded func(group, kind string) bool
}

// alwaysExcluded are the kinds Argo CD never watches, so never orphans.
var alwaysExcluded = []app.GroupKind{
	{Group: "events.k8s.io", Kind: "*"}, {Group: "metrics.k8s.io", Kind: "*"},
	{Group: "", Kind: "Event"}, {Group: "coordination.k8s.io", Kind: "Lease"}, {Group: "", Kind: "Endpoints"},
}

// Find lists the orphaned resources of req.App in req.Namespace, sorted.
// A kind that fails to list is named in the error; the others still count.
func Find(ctx context.Context, c Clients, req Request) ([]app.ResourceKey, error) {
	if req.Namespace == "" {
		return nil, fmt.Errorf("app %q: no destination namespace: orphaned resources are looked for in the app's destination namespace", req.App)
	}
	kinds, err := listableKinds(c.Discovery)
	var errs []error
	if err != nil {
		if len(kinds) == 0 {
			return nil, fmt.Errorf("discover the region's kinds: %w", err)
		}
		errs = append(errs, fmt.Errorf("discover some of the region's kinds: %w", err))
	}
	managed := map[app.ResourceKey]bool{}
	for _, k := range req.Managed {
		k.Version = ""
		managed[k] = true
	}
	var out []app.ResourceKey
	for _, gvk := range kinds {
		if excluded(gvk.Group, gvk.Kind, req.Excluded) {
			continue
		}
		list, err := c.Dynamic.Resource(gvk.resource).Namespace(req.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
				errs = append(errs, fmt.Errorf("list %s in namespace %s: %w", gvk.Kind, req.Namespace, err))
			}
			continue
		}
		for i := range list.Items {
			obj := &list.Items[i]
			obj.SetAPIVersion(gvk.GroupVersion().String())
			obj.SetKind(gvk.Kind)
			k := kube.KeyOf(obj)
			k.Version = ""
			if len(obj.GetOwnerReferences()) > 0 || managed[k] || trackedByRunning(obj, req.Running) || req.Project.IgnoresOrphan(k) {
				continue
			}
			k.Version = gvk.Version
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return keyLess(out[i], out[j]) })
	return out, errors.Join(errs...)
}

func excluded(group, kind string, also func(string, string) bool) bool {
	for _, gk := range alwaysExcluded {
		if ok, _ := path.Match(gk.Kind, kind); ok && gk.Group == group {
			return true
		}
	}
	return also != nil && also(group, kind)
}

// trackedByRunning tells whether obj's tracking id names a running app
// and is the one that app would give it.
func trackedByRunning(obj *unstructured.Unstructured, running func(string) bool) bool {
	owner, _, ok := strings.Cut(obj.GetAnnotations()[kube.AnnotationTrackingID], ":")
	if !ok || !kube.IsTracked(owner, obj) {
		return false
	}
	return running == nil || running(owner)
}

type servedKind struct {
	schema.GroupVersionKind
	resource schema.GroupVersionResource
}

// listableKinds are the namespaced kinds the server prefers a version of
// and can list.
func listableKinds(d discovery.DiscoveryInterface) ([]servedKind, error) {
	lists, err := discovery.ServerPreferredNamespacedResources(d)
	var out []servedKind
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			out = append(out, servedKind{GroupVersionKind: gv.WithKind(r.Kind), resource: gv.WithResource(r.Name)})
		}
	}
	return out, err
}

func keyLess(a, b app.ResourceKey) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Name < b.Name
}
