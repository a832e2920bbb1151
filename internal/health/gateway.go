package health

// Gateway API (gateway.networking.k8s.io), as its API reference documents
// the status (https://gateway-api.sigs.k8s.io/reference/spec/): a
// Gateway's Accepted and Programmed conditions (reason Pending until a
// controller acts on it, AddressNotAssigned while it waits for an
// address); an HTTPRoute's status.parents, one per Gateway it attaches to,
// each with its parentRef and the conditions Accepted and ResolvedRefs.
// Every condition carries the generation it was written for.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// gatewayHealth is Healthy once the Gateway is Accepted and Programmed,
// Degraded when either is False for a reason other than waiting (an
// invalid listener, no resources), and Progressing before.
func gatewayHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, _, err := conditionsOf(obj)
	if err != nil {
		return "", "", err
	}
	accepted, hasAccepted := find(conds, "Accepted")
	programmed, hasProgrammed := find(conds, "Programmed")
	if (hasAccepted && stale(obj, accepted)) || (hasProgrammed && stale(obj, programmed)) {
		return app.HealthProgressing, "waiting for the gateway controller to observe the latest spec", nil
	}
	if hasAccepted && accepted.Status == "False" && accepted.Reason != "Pending" {
		return app.HealthDegraded, "gateway is not accepted: " + accepted.why(), nil
	}
	if hasProgrammed && programmed.Status == "False" && programmed.Reason != "Pending" && programmed.Reason != "AddressNotAssigned" {
		return app.HealthDegraded, "gateway is not programmed: " + programmed.why(), nil
	}
	if isTrue(conds, "Accepted") && isTrue(conds, "Programmed") {
		return app.HealthHealthy, "", nil
	}
	if hasProgrammed && programmed.why() != "" {
		return app.HealthProgressing, "gateway is not programmed yet: " + programmed.why(), nil
	}
	return app.HealthProgressing, "waiting for a gateway controller to accept the gateway", nil
}

// httpRouteHealth is Healthy once every parent Gateway accepted the route
// and resolved its references, Degraded when one refused it or cannot
// resolve a backend, and Progressing while no Gateway has answered.
func httpRouteHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	parents, _, err := unstructured.NestedSlice(obj.Object, "status", "parents")
	if err != nil {
		return "", "", err
	}
	if len(parents) == 0 {
		return app.HealthProgressing, "waiting for a gateway to accept the route", nil
	}
	waiting := ""
	for _, p := range parents {
		parent, _ := p.(map[string]any)
		name, _, _ := unstructured.NestedString(parent, "parentRef", "name")
		raw, _, _ := unstructured.NestedFieldNoCopy(parent, "conditions")
		conds, _, err := decodeConditions(raw)
		if err != nil {
			return "", "", err
		}
		accepted, hasAccepted := find(conds, "Accepted")
		resolved, hasResolved := find(conds, "ResolvedRefs")
		switch {
		case hasAccepted && stale(obj, accepted):
			waiting = fmt.Sprintf("waiting for gateway %q to observe the latest spec", name)
		case hasAccepted && accepted.Status == "False" && accepted.Reason != "Pending":
			return app.HealthDegraded, fmt.Sprintf("route is not accepted by gateway %q: %s", name, accepted.why()), nil
		case hasResolved && resolved.Status == "False":
			return app.HealthDegraded, fmt.Sprintf("gateway %q cannot resolve the route's references: %s", name, resolved.why()), nil
		case !hasAccepted || accepted.Status != "True":
			waiting = fmt.Sprintf("waiting for gateway %q to accept the route", name)
		}
	}
	if waiting != "" {
		return app.HealthProgressing, waiting, nil
	}
	return app.HealthHealthy, "", nil
}
