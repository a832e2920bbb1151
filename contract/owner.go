package contract

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
)

// Owner is who an app's spec comes from. The workflow records it when the
// app is created and keeps it across continue-as-new; only its owner may
// change the app's spec, and only its own app of apps may prune it.
type Owner struct {
	// Parent is the app of apps that renders the app from its Git; empty
	// means a user (ferry app apply, or the temporal CLI).
	Parent string `json:"parent,omitempty"`
	// AppSet is the ApplicationSet that generates the app.
	AppSet string `json:"appSet,omitempty"`
	// Object is the Application object of the control cluster that the
	// app is, as "namespace/name": its spec comes from the object, and the
	// app's status is written back to it.
	Object string `json:"object,omitempty"`
}

func (o Owner) String() string {
	switch {
	case o.Object != "":
		return fmt.Sprintf("Application object %s of the control cluster", o.Object)
	case o.AppSet != "":
		return fmt.Sprintf("applicationset %q", o.AppSet)
	case o.Parent == "":
		return "a user (ferry app apply)"
	}
	return fmt.Sprintf("app of apps %q", o.Parent)
}

// controller is whether the owner is an app of apps or an ApplicationSet.
func (o Owner) Controller() bool { return o.Parent != "" || o.AppSet != "" }

// origin says where the owner's apps come from, and how to change one.
func (o Owner) origin() (from, fix string) {
	if o.AppSet != "" {
		return fmt.Sprintf("the generators of applicationset %q", o.AppSet),
			fmt.Sprintf("change the generators or template of applicationset %q so that it names another app", o.AppSet)
	}
	return fmt.Sprintf("the Git of %q", o.Parent), ""
}

// SpecRequest says who sends a spec update: its second argument, and the
// owner a new app is started with. Left out, it is a user.
type SpecRequest struct {
	// Parent is the app of apps whose Git the Application comes from;
	// empty: a user.
	Parent string `json:"parent,omitempty"`
	// AppSet is the ApplicationSet whose generators produce the app.
	AppSet string `json:"appSet,omitempty"`
	// ForceAdopt lets a user take over an app that an app of apps owns
	// (ferry app apply --force-adopt): the app is the user's from then on.
	ForceAdopt bool `json:"forceAdopt,omitempty"`
	// Object is the Application object ("namespace/name") the spec comes
	// from: the control worker's request.
	Object string `json:"object,omitempty"`
	// Created: Parent created this app before (it is among its children),
	// so it may claim the app when no owner was recorded (an app started
	// before Ferry recorded owners).
	Created bool `json:"created,omitempty"`
}

func (r SpecRequest) Owner() Owner {
	return Owner{Parent: r.Parent, AppSet: r.AppSet, Object: r.Object}
}

// ErrAppOwned is the error type of a spec or delete update refused because
// the app belongs to another owner; no retry helps.
const ErrAppOwned = "AppOwned"

// CheckOwner refuses a spec update of app name from by when the app
// belongs to another owner (owner nil: not recorded). A user may adopt an
// app of apps' child only with ForceAdopt; an app of apps may change only
// its own children, and claim an unrecorded app only when it created it.
func CheckOwner(name string, owner *Owner, by SpecRequest) error {
	if b := by.Owner(); b.AppSet != "" {
		return checkAppSetOwner(name, owner, by)
	}
	if by.Object != "" || owner != nil && owner.Object != "" {
		return checkObjectOwner(name, owner, by)
	}
	switch {
	case owner == nil:
		if by.Parent == "" || by.Created {
			return nil
		}
		return OwnedError(fmt.Sprintf("app %q has no recorded owner (it was created before Ferry recorded owners) and app of apps %q did not create it: "+
			"it cannot change or delete it; remove %s from the Git of %q, or give the child another name", name, by.Parent, name, by.Parent))
	case *owner == by.Owner():
		return nil
	case owner.Controller() && by.Parent == "":
		if by.ForceAdopt {
			return nil
		}
		from, _ := owner.origin()
		return OwnedError(fmt.Sprintf("app %q is owned by %s (its spec comes from %s): change it there, "+
			"or take it over with ferry app apply --force-adopt (then %q leaves it alone)", name, owner, from, cmp.Or(owner.AppSet, owner.Parent)))
	case owner.Parent == "" && owner.AppSet == "":
		return OwnedError(fmt.Sprintf("app %q is owned by %s: app of apps %q cannot change or delete it; "+
			"remove %s from the Git of %q or give the child another name, or hand the app over with ferry app delete %s --cascade=false, "+
			"after which %q creates it", name, owner, by.Parent, name, by.Parent, name, by.Parent))
	}
	return OwnedError(fmt.Sprintf("app %q is owned by %s: app of apps %q cannot change or delete it; remove %s from the Git of %q or give the child another name",
		name, owner, by.Parent, name, by.Parent))
}

// checkAppSetOwner is CheckOwner for an ApplicationSet's request: it may
// change only the apps it generated, and never takes one over.
func checkAppSetOwner(name string, owner *Owner, by SpecRequest) error {
	b := by.Owner()
	_, fix := b.origin()
	switch {
	case owner == nil && by.Created, owner != nil && *owner == b:
		return nil
	case owner == nil:
		return OwnedError(fmt.Sprintf("app %q has no recorded owner and %s did not create it: it cannot change or delete it; %s", name, b, fix))
	case !owner.Controller():
		return OwnedError(fmt.Sprintf("app %q is owned by %s: %s cannot change or delete it; %s, or hand the app over with ferry app delete %s --cascade=false, after which %s creates it",
			name, owner, b, fix, name, b))
	}
	return OwnedError(fmt.Sprintf("app %q is owned by %s: %s cannot change or delete it; %s", name, owner, b, fix))
}

// checkObjectOwner is CheckOwner where an Application object is the
// owner or the sender. The object is the app: it takes over an app a user
// applied (the control cluster is then where apps are written), and only
// it changes the app from then on.
func checkObjectOwner(name string, owner *Owner, by SpecRequest) error {
	b := by.Owner()
	switch {
	case owner == nil, *owner == b, by.Object != "" && !owner.Controller() && owner.Object == "":
		return nil
	case by.Object != "":
		return OwnedError(fmt.Sprintf("app %q is owned by %s: Application object %s cannot change it; "+
			"rename the object, or hand the app over with ferry app delete %s --cascade=false", name, owner, by.Object, name))
	}
	ns, obj, _ := strings.Cut(owner.Object, "/")
	return OwnedError(fmt.Sprintf("app %q is owned by %s: edit the object (kubectl -n %s edit application %s), not the app", name, owner, ns, obj))
}

func OwnedError(msg string) error {
	return temporal.NewNonRetryableApplicationError(msg, ErrAppOwned, nil)
}

// IsOwnerRefusal reports whether err is a spec or delete update refused
// because the app belongs to another owner.
func IsOwnerRefusal(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.Type() == ErrAppOwned
}

// ErrorMessage is err's message without the error type and retry flag an
// ApplicationError adds, for a status a user reads.
func ErrorMessage(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	return err.Error()
}
