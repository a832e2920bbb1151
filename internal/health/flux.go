package health

// Flux (helm.toolkit.fluxcd.io, kustomize.toolkit.fluxcd.io,
// source.toolkit.fluxcd.io), as its API references document the status
// (https://fluxcd.io/flux/components/, "Status" of each kind): spec.suspend;
// status.observedGeneration; the conditions Ready, Reconciling and Stalled,
// which follow kstatus. Ready is Unknown while a reconcile runs and False
// when the last one failed; reason DependencyNotReady means the object
// waits on another (spec.dependsOn).

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// helmReleaseHealth is fluxHealth for a HelmRelease: a failed install,
// upgrade, test or remediation leaves Ready=False and so Degraded.
func helmReleaseHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	return fluxHealth(obj, "helm release")
}

// kustomizationHealth is fluxHealth for a Kustomization: a build, apply or
// health check failure leaves Ready=False and so Degraded.
func kustomizationHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	return fluxHealth(obj, "kustomization")
}

// fluxSourceHealth is fluxHealth for a GitRepository, HelmRepository or
// OCIRepository: Healthy once it has fetched an artifact of the latest
// spec.
func fluxSourceHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	return fluxHealth(obj, "source")
}

// fluxHealth is Suspended while spec.suspend holds, Progressing until the
// controller observed the latest spec and while a reconcile runs or waits
// on a dependency, Degraded when Stalled or the last reconcile failed, and
// Healthy once Ready.
func fluxHealth(obj *unstructured.Unstructured, what string) (app.HealthStatusCode, string, error) {
	if suspended, _, _ := unstructured.NestedBool(obj.Object, "spec", "suspend"); suspended {
		return app.HealthSuspended, what + " is suspended", nil
	}
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	if specNotObserved(obj) {
		return app.HealthProgressing, "waiting for Flux to observe the latest spec", nil
	}
	if c, ok := find(conds, "Stalled"); ok && c.Status == "True" {
		return app.HealthDegraded, orWaiting(c, true, what+" is stalled: ", what+" is stalled"), nil
	}
	ready, hasReady := find(conds, "Ready")
	switch {
	case hasReady && ready.Status == "True":
		return app.HealthHealthy, "", nil
	case hasReady && ready.Status == "False" && ready.Reason == "DependencyNotReady":
		return app.HealthProgressing, orWaiting(ready, true, "waiting for dependencies: ", "waiting for dependencies"), nil
	case hasReady && ready.Status == "False":
		return app.HealthDegraded, orWaiting(ready, true, what+" failed: ", what+" failed"), nil
	}
	if c, ok := find(conds, "Reconciling"); ok && c.Status == "True" {
		return app.HealthProgressing, orWaiting(c, true, "reconciling: ", "reconciling"), nil
	}
	return app.HealthProgressing, orWaiting(ready, hasReady, what+" is not ready yet: ", "waiting for Flux to reconcile the "+what), nil
}
