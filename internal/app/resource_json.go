package app

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ResourceHealth is a resource's health as Argo CD writes it:
// status.resources[].health.{status,message}.
type ResourceHealth struct {
	Status  HealthStatusCode `json:"status,omitempty"`
	Message string           `json:"message,omitempty"`
}

// resourceStatusFields is ResourceStatus without its JSON methods.
type resourceStatusFields ResourceStatus

// MarshalJSON writes the health as an object, as Argo CD does.
func (r ResourceStatus) MarshalJSON() ([]byte, error) {
	var h *ResourceHealth
	if r.Health != "" || r.HealthMessage != "" {
		h = &ResourceHealth{Status: r.Health, Message: r.HealthMessage}
	}
	return json.Marshal(struct {
		resourceStatusFields
		Health *ResourceHealth `json:"health,omitempty"`
	}{resourceStatusFields(r), h})
}

// UnmarshalJSON reads the health as an object, or as the bare code that
// Ferry wrote before (recorded histories and carried state hold it).
func (r *ResourceStatus) UnmarshalJSON(data []byte) error {
	var in struct {
		resourceStatusFields
		Health json.RawMessage `json:"health,omitempty"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*r = ResourceStatus(in.resourceStatusFields)
	raw := bytes.TrimSpace(in.Health)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] == '"' {
		return json.Unmarshal(raw, &r.Health)
	}
	var h ResourceHealth
	if err := json.Unmarshal(raw, &h); err != nil {
		return fmt.Errorf("resource %s/%s health: %w", r.Kind, r.Name, err)
	}
	r.Health, r.HealthMessage = h.Status, h.Message
	return nil
}
