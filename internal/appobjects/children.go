package appobjects

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// Children are the child Applications of apps of apps as objects of the
// control cluster, as Argo CD's app of apps writes them: each in its
// parent's namespace (the control namespace for a parent that is no
// object's, or is one of it), carrying the parent's label and tracking id,
// so that the parent changes and deletes only its own. The controller
// makes each object an app, as any other.
type Children struct {
	Client dynamic.Interface
	// Namespace is the control namespace.
	Namespace string
}

// ErrNotOwned: an object of the child's name is there and is not the
// parent's (a user's, or another parent's): it is left as it is.
var ErrNotOwned = errors.New("not the app of apps' object")

// Place is where parent's child name goes: the namespace of its object and
// the name of its app.
func (c *Children) Place(parent, name string) (ns, appName string) {
	if pns, _ := app.SplitName(parent); pns != "" {
		return pns, app.QualifiedName(pns, name)
	}
	return c.Namespace, name
}

// Write creates or updates the object of parent's child (server-side
// apply, field manager ferry) and returns its key. An object of that name
// that is not the parent's is refused with ErrNotOwned.
func (c *Children) Write(ctx context.Context, parent string, child *app.Application) (key string, err error) {
	ns, _ := c.Place(parent, child.Metadata.Name)
	key = Key(ns, child.Metadata.Name)
	if _, err := c.owned(ctx, parent, ns, child.Metadata.Name); err != nil && !apierrors.IsNotFound(err) {
		return key, err
	}
	u, err := childObject(parent, ns, child)
	if err != nil {
		return key, fmt.Errorf("application %s: %w", key, err)
	}
	_, err = c.Client.Resource(Applications).Namespace(ns).Apply(ctx, child.Metadata.Name, u,
		metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return key, fmt.Errorf("write Application object %s: %w", key, err)
	}
	return key, nil
}

// Delete deletes the object of parent's child name, if it is the parent's;
// its resources finalizer decides what its deletion takes with it. found
// is false when there is no such object.
func (c *Children) Delete(ctx context.Context, parent, name string) (found bool, err error) {
	ns, _ := c.Place(parent, name)
	u, err := c.owned(ctx, parent, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return true, err
	}
	err = c.Client.Resource(Applications).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: ptr(u.GetUID())}})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return true, err
}

// Exists tells whether the object of parent's child name is there; an
// object that is not the parent's is ErrNotOwned.
func (c *Children) Exists(ctx context.Context, parent, name string) (bool, error) {
	ns, _ := c.Place(parent, name)
	_, err := c.owned(ctx, parent, ns, name)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// owned gets the object name of namespace ns if parent tracks it: a
// NotFound error when there is none, ErrNotOwned when it is another's.
func (c *Children) owned(ctx context.Context, parent, ns, name string) (*unstructured.Unstructured, error) {
	u, err := c.Client.Resource(Applications).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if !kube.IsTracked(parent, u) {
		return nil, fmt.Errorf("Application object %s: %w %q: it was made or taken over by someone else; delete it, or rename the child in Git",
			Key(ns, name), ErrNotOwned, parent)
	}
	return u, nil
}

// childObject is child as the object parent writes: its apiVersion, kind,
// metadata and spec, placed in ns, with the parent's label and tracking id.
func childObject(parent, ns string, child *app.Application) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(child)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(b, &u.Object); err != nil {
		return nil, err
	}
	u.SetNamespace(ns)
	kube.Track(parent, u)
	return u, nil
}

func ptr[T any](v T) *T { return &v }
