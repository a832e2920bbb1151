package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

const opsgenieAPIURL = "https://api.opsgenie.com"

// OpsgenieOptions are service.opsgenie's: the API's URL (api.opsgenie.com,
// api.eu.opsgenie.com, or a URL with its scheme) and an API integration's
// key per team (the subscription's recipient).
type OpsgenieOptions struct {
	APIURL             string            `json:"apiUrl,omitempty"`
	APIKeys            map[string]string `json:"apiKeys"`
	InsecureSkipVerify bool              `json:"insecureSkipVerify,omitempty"`
	transportOptions
}

// OpsgenieTemplate is a template's opsgenie part: the alert's fields
// beside its message.
type OpsgenieTemplate struct {
	Description string              `json:"description"`
	Priority    string              `json:"priority,omitempty"`
	Alias       string              `json:"alias,omitempty"`
	Note        string              `json:"note,omitempty"`
	Actions     []string            `json:"actions,omitempty"`
	Tags        []string            `json:"tags,omitempty"`
	Details     map[string]string   `json:"details,omitempty"`
	Entity      string              `json:"entity,omitempty"`
	VisibleTo   []OpsgenieResponder `json:"visibleTo,omitempty"`
	User        string              `json:"user,omitempty"`
}

// OpsgenieResponder is a team or user, by id, name or username. Argo CD's
// templates write the keys capitalized (Id, Type), as its client's fields.
type OpsgenieResponder struct {
	Type     string `json:"type"`
	ID       string `json:"id,omitempty"`
	Name     string `json:"name,omitempty"`
	Username string `json:"username,omitempty"`
}

func (o *OpsgenieOptions) check() error {
	if len(o.APIKeys) == 0 {
		return fmt.Errorf("apiKeys is empty; map each team (the subscription's recipient) to its API integration's key ($opsgenie-key)")
	}
	return nil
}

// opsgenieAlert is the body of Opsgenie's "create alert".
type opsgenieAlert struct {
	Message     string              `json:"message"`
	Alias       string              `json:"alias,omitempty"`
	Description string              `json:"description,omitempty"`
	Responders  []OpsgenieResponder `json:"responders,omitempty"`
	VisibleTo   []OpsgenieResponder `json:"visibleTo,omitempty"`
	Actions     []string            `json:"actions,omitempty"`
	Tags        []string            `json:"tags,omitempty"`
	Details     map[string]string   `json:"details,omitempty"`
	Entity      string              `json:"entity,omitempty"`
	Source      string              `json:"source"`
	Priority    string              `json:"priority,omitempty"`
	User        string              `json:"user,omitempty"`
	Note        string              `json:"note,omitempty"`
}

// send creates an alert for the recipient team with its key. The alias,
// Opsgenie's key for deduplication, is the notification's ID unless the
// template gives one, so that a retry never opens a second alert.
func (o *OpsgenieOptions) send(ctx context.Context, _ string, n Notification, d Delivery) error {
	key, err := recipientEntry(o.APIKeys, d.Recipient, "apiKeys", TypeOpsgenie)
	if err != nil {
		return err
	}
	alert := opsgenieAlert{
		Message:    truncate(strings.TrimSpace(n.Message), 130), // Opsgenie's limit
		Alias:      truncate(d.ID, 512),
		Responders: []OpsgenieResponder{{Type: "team", Name: d.Recipient}},
		Source:     "Ferry",
	}
	if alert.Message == "" {
		return permanent("the alert's message is empty: give the template a message")
	}
	if t := n.Opsgenie; t != nil {
		if strings.TrimSpace(t.Description) == "" {
			return permanent("template's opsgenie.description is empty")
		}
		alert.Description, alert.Priority, alert.Note = t.Description, t.Priority, t.Note
		alert.Alias = cmp.Or(t.Alias, alert.Alias)
		alert.Actions, alert.Tags, alert.Details, alert.Entity, alert.User = t.Actions, t.Tags, t.Details, t.Entity, t.User
		alert.VisibleTo = t.VisibleTo
	}
	body, _ := json.Marshal(alert)
	base := cmp.Or(o.APIURL, opsgenieAPIURL)
	if !strings.Contains(base, "://") {
		base = "https://" + base
	}
	req, err := newRequest(http.MethodPost, strings.TrimRight(base, "/")+"/v2/alerts", body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "GenieKey "+key)
	_, err = do(ctx, httpClient(o.InsecureSkipVerify), req)
	return err
}
