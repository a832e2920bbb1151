package health

// cert-manager (cert-manager.io/v1), as its API reference documents the
// status (https://cert-manager.io/docs/reference/api-docs/): a
// Certificate's Ready and Issuing conditions and status.lastFailureTime; a
// CertificateRequest's Ready (reasons Pending, Issued, Failed, Denied),
// Approved, Denied and InvalidRequest conditions; an Issuer's or
// ClusterIssuer's Ready condition. Every condition carries the generation
// it was written for.

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// certificateHealth is Healthy while the certificate is Ready (a renewal in
// progress does not change that), Degraded when its last issuance failed
// (Issuing=False with reason Failed, or a lastFailureTime while not ready),
// and Progressing while it is being issued or not yet ready for another
// reason, such as a secret that does not exist yet.
func certificateHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	ready, hasReady := find(conds, "Ready")
	if hasReady && stale(obj, ready) {
		return app.HealthProgressing, "waiting for cert-manager to observe the latest spec", nil
	}
	if hasReady && ready.Status == "True" {
		return app.HealthHealthy, "", nil
	}
	issuing, hasIssuing := find(conds, "Issuing")
	if hasIssuing && issuing.Status == "False" && issuing.Reason == "Failed" {
		return app.HealthDegraded, "certificate issuance failed: " + issuing.why(), nil
	}
	if failed, _, _ := unstructured.NestedString(obj.Object, "status", "lastFailureTime"); failed != "" {
		return app.HealthDegraded, orWaiting(ready, hasReady, "certificate issuance failed: ", "certificate issuance failed"), nil
	}
	if hasIssuing && issuing.Status == "True" {
		return app.HealthProgressing, orWaiting(issuing, true, "certificate is being issued: ", "certificate is being issued"), nil
	}
	return app.HealthProgressing, orWaiting(ready, hasReady, "certificate is not ready: ", "waiting for cert-manager to issue the certificate"), nil
}

// certificateRequestHealth is Healthy once the request is issued, Degraded
// when it failed, was denied or is invalid, and Progressing while it waits
// for approval or for the issuer.
func certificateRequestHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	if c, ok := find(conds, "InvalidRequest"); ok && c.Status == "True" {
		return app.HealthDegraded, orWaiting(c, true, "certificate request is invalid: ", "certificate request is invalid"), nil
	}
	if c, ok := find(conds, "Denied"); ok && c.Status == "True" {
		return app.HealthDegraded, orWaiting(c, true, "certificate request was denied: ", "certificate request was denied"), nil
	}
	ready, hasReady := find(conds, "Ready")
	switch {
	case hasReady && ready.Status == "True":
		return app.HealthHealthy, "", nil
	case hasReady && ready.Status == "False" && (ready.Reason == "Failed" || ready.Reason == "Denied"):
		return app.HealthDegraded, "certificate request failed: " + ready.why(), nil
	case !isTrue(conds, "Approved"):
		return app.HealthProgressing, "waiting for the certificate request to be approved", nil
	}
	return app.HealthProgressing, orWaiting(ready, hasReady, "certificate request is pending: ", "waiting for the issuer to sign the certificate request"), nil
}

// issuerHealth, for an Issuer or a ClusterIssuer, is Healthy while it is
// Ready, Degraded when cert-manager found it unusable (Ready=False, such as
// an ACME account it cannot register), and Progressing until it is checked.
func issuerHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	ready, ok := find(conds, "Ready")
	switch {
	case !ok:
		return app.HealthProgressing, "waiting for cert-manager to check the issuer", nil
	case stale(obj, ready):
		return app.HealthProgressing, "waiting for cert-manager to observe the latest spec", nil
	case ready.Status == "True":
		return app.HealthHealthy, "", nil
	case ready.Status == "False":
		return app.HealthDegraded, orWaiting(ready, true, "issuer is not ready: ", "issuer is not ready"), nil
	}
	return app.HealthProgressing, orWaiting(ready, true, "issuer is not ready yet: ", "waiting for cert-manager to check the issuer"), nil
}
