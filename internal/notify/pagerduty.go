package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

const pagerDutyEventsURL = "https://events.pagerduty.com"

// PagerDutyV2Options are service.pagerdutyv2's: an Events API v2
// integration's key per PagerDuty service (the subscription's recipient).
// apiURL, Ferry's own key, is the Events API's base URL.
type PagerDutyV2Options struct {
	ServiceKeys map[string]string `json:"serviceKeys"`
	APIURL      string            `json:"apiURL,omitempty"`
}

// PagerDutyV2Template is a template's pagerdutyv2 part: the event's payload.
type PagerDutyV2Template struct {
	Summary   string `json:"summary"`
	Severity  string `json:"severity"`
	Source    string `json:"source"`
	Component string `json:"component,omitempty"`
	Group     string `json:"group,omitempty"`
	Class     string `json:"class,omitempty"`
	URL       string `json:"url,omitempty"`
	DedupKey  string `json:"dedupKey,omitempty"`
}

func (o *PagerDutyV2Options) check() error {
	if len(o.ServiceKeys) == 0 {
		return fmt.Errorf("serviceKeys is empty; map each PagerDuty service (the subscription's recipient) to its integration key ($pagerduty-key)")
	}
	return nil
}

var pagerDutySeverities = map[string]bool{"critical": true, "error": true, "warning": true, "info": true}

type pagerDutyEvent struct {
	RoutingKey  string           `json:"routing_key"`
	EventAction string           `json:"event_action"`
	DedupKey    string           `json:"dedup_key,omitempty"`
	Client      string           `json:"client,omitempty"`
	ClientURL   string           `json:"client_url,omitempty"`
	Payload     pagerDutyPayload `json:"payload"`
}

type pagerDutyPayload struct {
	Summary   string `json:"summary"`
	Source    string `json:"source"`
	Severity  string `json:"severity"`
	Component string `json:"component,omitempty"`
	Group     string `json:"group,omitempty"`
	Class     string `json:"class,omitempty"`
}

// send triggers an event. Its dedup key is the notification's ID unless
// the template gives one, so that a retry never opens a second incident.
func (o *PagerDutyV2Options) send(ctx context.Context, _ string, n Notification, d Delivery) error {
	key, err := recipientEntry(o.ServiceKeys, d.Recipient, "serviceKeys", TypePagerDutyV2)
	if err != nil {
		return err
	}
	t := n.PagerDutyV2
	if t == nil {
		return permanent("the templates have no pagerdutyv2 part (summary, severity, source)")
	}
	if strings.TrimSpace(t.Summary) == "" || strings.TrimSpace(t.Source) == "" {
		return permanent("template's pagerdutyv2.summary and .source must not be empty")
	}
	if !pagerDutySeverities[t.Severity] {
		return permanent("template's pagerdutyv2.severity %q: give critical, error, warning or info", t.Severity)
	}
	event := pagerDutyEvent{
		RoutingKey: key, EventAction: "trigger", DedupKey: truncate(cmp.Or(t.DedupKey, d.ID), 255),
		Client: "Ferry", ClientURL: t.URL,
		Payload: pagerDutyPayload{Summary: truncate(t.Summary, 1024), Source: t.Source, Severity: t.Severity,
			Component: t.Component, Group: t.Group, Class: t.Class},
	}
	body, _ := json.Marshal(event)
	req, err := newRequest(http.MethodPost, strings.TrimRight(cmp.Or(o.APIURL, pagerDutyEventsURL), "/")+"/v2/enqueue", body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	_, err = do(ctx, httpClient(false), req)
	return err
}

const pagerDutyAPIURL = "https://api.pagerduty.com"

// PagerDutyOptions are service.pagerduty's: a REST API token and the
// email of the PagerDuty user the incidents are created as. The
// subscription's recipient is the PagerDuty service's ID; serviceID is
// the one for a subscription that names none. apiURL, Ferry's own key, is
// the REST API's base URL.
type PagerDutyOptions struct {
	Token     string `json:"token"`
	From      string `json:"from"`
	ServiceID string `json:"serviceID,omitempty"`
	APIURL    string `json:"apiURL,omitempty"`
}

// PagerDutyTemplate is a template's pagerduty part: the incident's fields.
type PagerDutyTemplate struct {
	Title      string `json:"title"`
	Body       string `json:"body,omitempty"`
	Urgency    string `json:"urgency,omitempty"`
	PriorityID string `json:"priorityID,omitempty"`
}

func (o *PagerDutyOptions) check() error {
	var missing []string
	if o.Token == "" {
		missing = append(missing, "token (a REST API token: $pagerdutyToken)")
	}
	if o.From == "" {
		missing = append(missing, "from (the email of a PagerDuty user of the account)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("give %s", strings.Join(missing, " and "))
	}
	return nil
}

type pagerDutyRef struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

type pagerDutyIncident struct {
	Type        string        `json:"type"`
	Title       string        `json:"title"`
	Service     pagerDutyRef  `json:"service"`
	Urgency     string        `json:"urgency,omitempty"`
	IncidentKey string        `json:"incident_key"`
	Body        *incidentBody `json:"body,omitempty"`
	Priority    *pagerDutyRef `json:"priority,omitempty"`
}

type incidentBody struct {
	Type    string `json:"type"`
	Details string `json:"details"`
}

// send creates an incident on the recipient service. Its incident key is
// the notification's ID: PagerDuty refuses a second open incident with
// the same key, so a retry never opens two.
func (o *PagerDutyOptions) send(ctx context.Context, _ string, n Notification, d Delivery) error {
	serviceID := cmp.Or(d.Recipient, o.ServiceID)
	if serviceID == "" {
		return permanent("no PagerDuty service: name its ID as the subscription's recipient, or give the service's serviceID")
	}
	t := n.PagerDuty
	if t == nil || strings.TrimSpace(t.Title) == "" {
		return permanent("the templates have no pagerduty part with a title")
	}
	if t.Urgency != "" && t.Urgency != "high" && t.Urgency != "low" {
		return permanent("template's pagerduty.urgency %q: give high or low", t.Urgency)
	}
	incident := pagerDutyIncident{Type: "incident", Title: truncate(t.Title, 1024),
		Service: pagerDutyRef{ID: serviceID, Type: "service_reference"}, Urgency: t.Urgency, IncidentKey: d.ID}
	if t.Body != "" {
		incident.Body = &incidentBody{Type: "incident_body", Details: t.Body}
	}
	if t.PriorityID != "" {
		incident.Priority = &pagerDutyRef{ID: t.PriorityID, Type: "priority_reference"}
	}
	body, _ := json.Marshal(map[string]any{"incident": incident})
	req, err := newRequest(http.MethodPost, strings.TrimRight(cmp.Or(o.APIURL, pagerDutyAPIURL), "/")+"/incidents", body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/vnd.pagerduty+json;version=2")
	req.Header.Set("Authorization", "Token token="+o.Token)
	req.Header.Set("From", o.From)
	_, err = do(ctx, httpClient(false), req)
	return err
}
