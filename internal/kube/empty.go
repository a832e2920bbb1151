package kube

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
)

// emptyNamespaces are, for one compare or one sync, the namespaces known
// to hold none of its objects. A new app often comes with a new namespace
// (CreateNamespace=true), and none of its objects can be there yet; the
// live cache cannot tell that alone (it holds only objects labelled as an
// app's, and one it does not hold may exist, applied by another tool), so
// without this a compare or a sync of a new app of 500 objects asks the
// API server for each of them, to be told 500 times that it is not there.
type emptyNamespaces struct {
	c *Cluster
	// ask: a namespace not known yet is looked up, once (a compare); else
	// only those marked created are known (a sync, which creates them).
	ask bool

	mu sync.Mutex
	// empty answers, per namespace asked or created, whether it holds none
	// of the objects.
	empty map[string]bool
}

func (c *Cluster) emptyNamespaces(ask bool) *emptyNamespaces {
	return &emptyNamespaces{c: c, ask: ask, empty: map[string]bool{}}
}

// created records that the sync has just created namespace ns: every
// object it applies there is new.
func (e *emptyNamespaces) created(ns string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.empty[ns] = true
}

// holds tells whether namespace ns may hold objects: false when it is
// known not to exist (asked once, on the first object of ns the live cache
// could not answer; the others wait for that answer) or to have been
// created by this sync. A failed lookup answers true: each object is asked
// for, as without it.
func (e *emptyNamespaces) holds(ctx context.Context, ns string) bool {
	if e == nil || ns == "" {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	empty, known := e.empty[ns]
	if !known && e.ask {
		empty = e.c.namespaceMissing(ctx, ns)
		e.empty[ns] = empty
	}
	return !empty
}

var namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// namespaceMissing tells whether the API server says namespace ns does not
// exist.
func (c *Cluster) namespaceMissing(ctx context.Context, ns string) bool {
	m, err := c.mapping(namespaceGVK)
	if err != nil {
		return false
	}
	_, err = c.resource(m, "").Get(ctx, ns, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}

// liveGetIn is liveGet, but answers that an object of a namespaced kind
// does not exist, without asking, when its namespace is known empty.
func (c *Cluster) liveGetIn(ctx context.Context, m *meta.RESTMapping, key app.ResourceKey, empty *emptyNamespaces) (*unstructured.Unstructured, error) {
	if obj, ok := c.liveCached(m, key); ok {
		return obj, nil
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace && !empty.holds(ctx, key.Namespace) {
		return nil, nil
	}
	return c.getLive(ctx, m, key)
}
