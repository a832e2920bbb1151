package health

// Crossplane, as its documentation describes the conditions of managed
// resources, composite resources and claims
// (https://docs.crossplane.io/latest/managed-resources/managed-resources/#conditions)
// and of packages (https://docs.crossplane.io/latest/packages/providers/#conditions):
// Synced (reasons ReconcileSuccess, ReconcileError, ReconcilePaused) and
// Ready (reasons Available, Unavailable, Creating, Deleting, ...); a
// Provider's or Configuration's Installed (reasons ActivePackageRevision,
// InactivePackageRevision, UnpackingPackage) and Healthy (reasons
// HealthyPackageRevision, UnhealthyPackageRevision,
// UnknownPackageRevisionHealth).
//
// Managed resources and claims have no group or kind of their own: every
// provider and every composition defines its own. An object is read as
// Crossplane's when its conditions hold both Synced and Ready and the
// Synced reason is one of Crossplane's three (isCrossplane).

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// crossplaneSynced are the reasons Crossplane writes on Synced.
var crossplaneSynced = map[string]bool{
	"ReconcileSuccess": true,
	"ReconcileError":   true,
	"ReconcilePaused":  true,
}

// isCrossplane tells whether obj reads as a Crossplane managed resource,
// composite resource or claim: Synced and Ready conditions, Synced with one
// of Crossplane's reasons.
func isCrossplane(obj *unstructured.Unstructured) bool {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return false
	}
	synced, ok := find(conds, "Synced")
	if !ok || !crossplaneSynced[synced.Reason] {
		return false
	}
	_, ok = find(conds, "Ready")
	return ok
}

// crossplaneHealth is Suspended while reconciliation is paused (the
// crossplane.io/paused annotation), Degraded when the last reconcile failed
// (Synced=False) or the external resource is Unavailable, Healthy once
// Ready, and Progressing while it is created, deleted or waits on the
// resources it composes.
func crossplaneHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	synced, _ := find(conds, "Synced")
	ready, _ := find(conds, "Ready")
	switch {
	case synced.Reason == "ReconcilePaused":
		return app.HealthSuspended, "reconciliation is paused", nil
	case stale(obj, synced):
		return app.HealthProgressing, "waiting for Crossplane to observe the latest spec", nil
	case synced.Status == "False":
		return app.HealthDegraded, orWaiting(synced, true, "not synced: ", "not synced"), nil
	case ready.Status == "True":
		return app.HealthHealthy, "", nil
	case ready.Status == "False" && ready.Reason == "Unavailable":
		return app.HealthDegraded, orWaiting(ready, true, "not available: ", "not available"), nil
	}
	return app.HealthProgressing, orWaiting(ready, true, "not ready yet: ", "waiting for the resource to become ready"), nil
}

// packageHealth, for a Provider or a Configuration, is Healthy once its
// revision is installed and healthy, Degraded when the revision is
// unhealthy, and Progressing while the package is unpacked, installed or
// its health is not known yet.
func packageHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	installed, hasInstalled := find(conds, "Installed")
	healthy, hasHealthy := find(conds, "Healthy")
	switch {
	case hasHealthy && healthy.Status == "False" && healthy.Reason != "UnknownPackageRevisionHealth":
		return app.HealthDegraded, orWaiting(healthy, true, "package is not healthy: ", "package is not healthy"), nil
	case !hasInstalled || installed.Status != "True":
		return app.HealthProgressing, orWaiting(installed, hasInstalled, "package is not installed yet: ", "waiting for the package manager to install the package"), nil
	case hasHealthy && healthy.Status == "True":
		return app.HealthHealthy, "", nil
	}
	return app.HealthProgressing, orWaiting(healthy, hasHealthy, "package health is not known yet: ", "waiting for the package to become healthy"), nil
}
