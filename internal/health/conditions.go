package health

import (
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// condition is the part of a status condition the checks read; every kind
// writes its conditions in this shape.
type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// ObservedGeneration is the metadata.generation the condition was
	// written for, where the controller records it (metav1.Condition).
	ObservedGeneration generation `json:"observedGeneration,omitempty"`
}

// generation reads an observedGeneration written as a number or, as some
// controllers do, a string; anything else reads as 0 (not recorded).
type generation int64

func (g *generation) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil
	}
	switch n := v.(type) {
	case float64:
		*g = generation(n)
	case string:
		if i, err := strconv.ParseInt(n, 10, 64); err == nil {
			*g = generation(i)
		}
	}
	return nil
}

// conditionsOf reads status.conditions. ok is false when obj has none.
func conditionsOf(obj *unstructured.Unstructured) (conds []condition, ok bool, err error) {
	raw, found, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil || !found {
		return nil, false, err
	}
	return decodeConditions(raw)
}

func decodeConditions(raw any) ([]condition, bool, error) {
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, false, err
	}
	var conds []condition
	if err := json.Unmarshal(data, &conds); err != nil {
		return nil, false, fmt.Errorf("read status.conditions: %w", err)
	}
	return conds, true, nil
}

func find(conds []condition, typ string) (condition, bool) {
	for _, c := range conds {
		if c.Type == typ {
			return c, true
		}
	}
	return condition{}, false
}

// why is a condition's reason and message, for a health message.
func (c condition) why() string {
	switch {
	case c.Reason != "" && c.Message != "":
		return c.Reason + ": " + c.Message
	case c.Message != "":
		return c.Message
	}
	return c.Reason
}

// customHealth reads a kind Ferry has no check for by the conventions most
// controllers follow (kstatus): a spec not yet observed is Progressing,
// Stalled=True is Degraded, Ready=True Healthy, Ready otherwise
// Progressing. An object without conditions is Healthy once it exists, as
// in Argo CD.
func customHealth(obj *unstructured.Unstructured) (app.HealthStatusCode, string, error) {
	conds, ok, err := conditionsOf(obj)
	if err != nil || !ok {
		return app.HealthHealthy, "", nil // no readable conditions: nothing to go by
	}
	generation, _ := number(obj, "metadata", "generation")
	if observed, found := number(obj, "status", "observedGeneration"); found && observed < generation {
		return app.HealthProgressing, "waiting for the controller to observe the latest spec", nil
	}
	if c, ok := find(conds, "Stalled"); ok && c.Status == "True" {
		return app.HealthDegraded, "stalled: " + c.why(), nil
	}
	c, ok := find(conds, "Ready")
	switch {
	case !ok:
		return app.HealthHealthy, "", nil
	case c.Status == "True":
		return app.HealthHealthy, "", nil
	case c.Status == "False" && c.Reason == "Failed":
		return app.HealthDegraded, "not ready: " + c.why(), nil
	}
	return app.HealthProgressing, "not ready yet: " + c.why(), nil
}

// number reads an integer field, whether decoded as int64 (from the API
// server) or float64 (from YAML).
func number(obj *unstructured.Unstructured, fields ...string) (int64, bool) {
	v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	switch n := v.(type) {
	case int64:
		return n, found
	case float64:
		return int64(n), found
	}
	return 0, false
}
