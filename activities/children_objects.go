package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
)

// With a control cluster (Children.Objects), an app of apps' children are
// Application objects there, as Argo CD's are: the parent writes and
// deletes the objects, and the control worker's controller makes each an
// app owned by its object. Without one, the parent runs them as apps
// itself (children.go).

// childTakenWithin bounds how long a sync waits for the controller to run
// the children it wrote: a compare after it then sees them, not Missing.
const childTakenWithin = 30 * time.Second

// childApp is the name of the app of parent's child name, and the key of
// its object ("" without a control cluster).
func (c *Children) childApp(parent, name string) (appName, object string) {
	if c.Objects == nil {
		return name, ""
	}
	ns, appName := c.Objects.Place(parent, name)
	return appName, appobjects.Key(ns, name)
}

// objectRefusal is err as the owner refusal it is when the object is
// another's.
func objectRefusal(err error) error {
	if errors.Is(err, appobjects.ErrNotOwned) {
		return temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrAppOwned, nil)
	}
	return err
}

// applyChild creates or updates parent's child: its object, or its app.
func (c *Children) applyChild(ctx context.Context, in contract.ChildrenInput, child *app.Application) error {
	if c.Objects == nil {
		_, err := ferryclient.Apply(ctx, c.Client, child, in.By(child.Metadata.Name))
		return err
	}
	_, err := c.Objects.Write(ctx, in.Parent, child)
	return objectRefusal(err)
}

// childOwned reports whether the running app v is parent's child: its
// object's, which the parent wrote, or the parent's own.
func (c *Children) childOwned(in contract.ChildrenInput, name string, v *contract.View) error {
	if _, object := c.childApp(in.Parent, name); object != "" {
		if v.Owner == nil || v.Owner.Object != object {
			return temporal.NewNonRetryableApplicationError("app "+v.Metadata.Name+" is not Application object "+object+"'s", contract.ErrAppOwned, nil)
		}
		return nil
	}
	return contract.CheckOwner(name, v.Owner, in.By(name))
}

// childObjectMissing reports, with a control cluster, whether parent's
// child name has no object yet; an object of another owner is an owner
// refusal.
func (c *Children) childObjectMissing(ctx context.Context, parent, name string) (bool, error) {
	if c.Objects == nil {
		return false, nil
	}
	exists, err := c.Objects.Exists(ctx, parent, name)
	return !exists && err == nil, objectRefusal(err)
}

// deleteChildObject deletes parent's child's object, if there is one that
// is the parent's; done once it is gone (its finalizer may hold it while
// its app cascades).
func (c *Children) deleteChildObject(ctx context.Context, parent, name string, wait bool) error {
	for {
		found, err := c.Objects.Delete(ctx, parent, name)
		if err != nil || !found || !wait {
			return objectRefusal(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// awaitChildren waits, for at most childTakenWithin, until the control
// worker runs each written child with the spec the parent wrote.
func (c *Children) awaitChildren(ctx context.Context, in contract.ChildrenInput, written []*app.Application) {
	if c.Objects == nil || len(written) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, childTakenWithin)
	defer cancel()
	for _, child := range written {
		appName, object := c.childApp(in.Parent, child.Metadata.Name)
		for ctx.Err() == nil {
			v, err := ferryclient.Query(ctx, c.Client, appName)
			if err == nil && v.Owner != nil && v.Owner.Object == object && v.SpecDigest() == child.SpecDigest() {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}
}
