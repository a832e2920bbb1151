package workflows

import (
	"fmt"
	"slices"

	"github.com/ferry-gitops/ferry/internal/app"

	"github.com/ferry-gitops/ferry/contract"
	"go.temporal.io/sdk/workflow"
)

// ownershipVersion marks the runs that record their owner from the start:
// one started before records none, and its owner stays unknown until one
// claims it (CheckOwner).
const ownershipVersion = "record-owner"

// startOwner is the owner a run starts with: the previous run's on
// continue-as-new, else the one the app was started with, else a user (the
// temporal CLI); nil (unknown) for a run that began before owners were
// recorded.
func startOwner(ctx workflow.Context, in Input) *contract.Owner {
	v := changeVersion(ctx, ownershipVersion)
	switch {
	case in.Carried != nil:
		return in.Carried.Owner
	case in.Owner != nil:
		return in.Owner
	case v == workflow.DefaultVersion:
		return nil
	}
	return &contract.Owner{}
}

// checkDeleteOwner refuses an app of apps' or ApplicationSet's delete (a
// prune) of an app it does not own, and an Application object's of an app
// another owns; a user may delete any app.
func checkDeleteOwner(name string, owner *contract.Owner, req contract.DeleteRequest) error {
	by := contract.Owner{Parent: req.Parent, AppSet: req.AppSet, Object: req.Object}
	switch {
	case owner != nil && *owner == by:
		return nil
	case by.Object != "":
		return contract.OwnedError(fmt.Sprintf("app %q is not Application object %s's: its deletion leaves the app alone", name, by.Object))
	case !by.Controller() || owner == nil:
		return nil
	}
	return contract.OwnedError(fmt.Sprintf("app %q is owned by %s: %s cannot delete it", name, owner, by))
}

// metadataEdit: a user's update of an ApplicationSet's app that changes
// its labels and annotations only, as kubectl annotate changes an Argo CD
// Application a set generated. It is accepted and the app stays the
// set's, which puts its own labels and annotations back when it next
// writes the app, but for those its spec.preservedFields (and Argo CD's
// controller) keep. An update no earlier run accepted: CheckOwner refused
// every user's update of a set's app but an adopting one.
func metadataEdit(owner *contract.Owner, by contract.SpecRequest, cur, next *app.Application) bool {
	return owner != nil && owner.AppSet != "" && by == (contract.SpecRequest{}) &&
		next.Metadata.Name == cur.Metadata.Name && next.SpecDigest() == cur.SpecDigest() &&
		slices.Equal(next.Metadata.Finalizers, cur.Metadata.Finalizers)
}
