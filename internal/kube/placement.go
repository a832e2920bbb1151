package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Placements places copies of the desired objects as a sync would (a
// namespaced object without a namespace gets defaultNS, a cluster-scoped
// one loses its namespace; a kind that a CRD among objs defines takes the
// CRD's scope) and tells each one's scope, so that a project's rules can be
// checked before anything is sent. objs are left as they are.
//
// An error is the API server's discovery failing: the caller retries.
func (c *Cluster) Placements(defaultNS string, objs []*unstructured.Unstructured) ([]app.PlacedObject, error) {
	pending := crdScopes(objs)
	out := make([]app.PlacedObject, 0, len(objs))
	for _, src := range objs {
		obj := src.DeepCopy()
		m, err := c.place(obj, defaultNS, pending)
		p := app.PlacedObject{Key: KeyOf(obj)}
		switch {
		case err == nil && m != nil:
			p.Known, p.Namespaced = true, m.Scope.Name() == meta.RESTScopeNameNamespace
		case err == nil:
			// A kind of a CRD of the same sync: place put it by the scope.
			p.Known, p.Namespaced = true, pending[obj.GroupVersionKind().GroupKind()] != "Cluster"
		case meta.IsNoMatchError(err):
		case IsInvalid(err):
			// Namespaced, but no namespace: the sync refuses it anyway.
			p.Known, p.Namespaced = true, true
		default:
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// NamespaceExists tells whether the region has the namespace: a sync with
// CreateNamespace=true creates it only when it does not.
func (c *Cluster) NamespaceExists(ctx context.Context, name string) (bool, error) {
	_, err := c.dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	}
	return false, err
}
