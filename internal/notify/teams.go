package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// TeamsOptions are service.teams's: an incoming webhook's URL per
// recipient (a channel's name in the subscription).
type TeamsOptions struct {
	RecipientURLs      map[string]string `json:"recipientUrls"`
	InsecureSkipVerify bool              `json:"insecureSkipVerify,omitempty"`
	transportOptions
}

// TeamsTemplate is a template's teams part: a MessageCard's fields, the
// JSON arrays (sections, facts, potentialAction) as strings, or a whole
// card of the template's own (template).
type TeamsTemplate struct {
	Template        string `json:"template,omitempty"`
	Title           string `json:"title,omitempty"`
	Summary         string `json:"summary,omitempty"`
	Text            string `json:"text,omitempty"`
	ThemeColor      string `json:"themeColor,omitempty"`
	Facts           string `json:"facts,omitempty"`
	Sections        string `json:"sections,omitempty"`
	PotentialAction string `json:"potentialAction,omitempty"`
}

func (o *TeamsOptions) check() error {
	if len(o.RecipientURLs) == 0 {
		return fmt.Errorf("recipientUrls is empty; map each recipient to its incoming webhook's URL (channel: $teams-channel-url)")
	}
	return nil
}

// messageCard is Office 365's card, which Teams' incoming webhooks take.
type messageCard struct {
	Type            string `json:"@type"`
	Context         string `json:"@context"`
	Title           string `json:"title,omitempty"`
	Summary         string `json:"summary,omitempty"`
	Text            string `json:"text"`
	ThemeColor      string `json:"themeColor,omitempty"`
	Sections        []any  `json:"sections,omitempty"`
	PotentialAction []any  `json:"potentialAction,omitempty"`
}

// send posts the card to the recipient's webhook. A connector answers 1
// when it took the card, and may say why not with a 200 of its own text.
func (o *TeamsOptions) send(ctx context.Context, _ string, n Notification, d Delivery) error {
	target, err := recipientEntry(o.RecipientURLs, d.Recipient, "recipientUrls", TypeTeams)
	if err != nil {
		return err
	}
	body, err := teamsBody(n)
	if err != nil {
		return err
	}
	req, err := newRequest(http.MethodPost, target, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	answer, err := do(ctx, httpClient(o.InsecureSkipVerify), req)
	if err != nil {
		return err
	}
	if a := strings.TrimSpace(string(answer)); a != "" && a != "1" {
		return permanent("Teams did not take the card: %s", truncate(a, 200))
	}
	return nil
}

func teamsBody(n Notification) ([]byte, error) {
	t := n.Teams
	if t != nil && strings.TrimSpace(t.Template) != "" {
		if !json.Valid([]byte(t.Template)) {
			return nil, permanent("template's teams.template is not JSON")
		}
		return []byte(t.Template), nil
	}
	card := messageCard{Type: "MessageCard", Context: "https://schema.org/extensions", Text: n.Message, Title: n.Title}
	if t != nil {
		card.Title = cmp.Or(t.Title, card.Title)
		card.Summary = t.Summary
		card.Text = cmp.Or(t.Text, card.Text)
		card.ThemeColor = t.ThemeColor
		for field, src := range map[string]string{"sections": t.Sections, "facts": t.Facts, "potentialAction": t.PotentialAction} {
			if strings.TrimSpace(src) == "" {
				continue
			}
			var v []any
			if err := json.Unmarshal([]byte(src), &v); err != nil {
				return nil, permanent("template's teams.%s is not a JSON array: %v", field, err)
			}
			switch field {
			case "sections":
				card.Sections = append(v, card.Sections...)
			case "facts":
				card.Sections = append(card.Sections, map[string]any{"facts": v})
			default:
				card.PotentialAction = v
			}
		}
	}
	if card.Summary == "" {
		card.Summary = cmp.Or(card.Title, truncate(card.Text, 80)) // a card without a summary is refused
	}
	return json.Marshal(card)
}
