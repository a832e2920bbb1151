package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// MattermostOptions are service.mattermost's: the server's URL and a bot's
// token.
type MattermostOptions struct {
	APIURL             string `json:"apiURL"`
	Token              string `json:"token"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
	transportOptions
}

// MattermostTemplate is a template's mattermost part: Slack-style
// attachments, a JSON array.
type MattermostTemplate struct {
	Attachments string `json:"attachments,omitempty"`
}

func (o *MattermostOptions) check() error {
	var missing []string
	if o.APIURL == "" {
		missing = append(missing, "apiURL (the server's URL)")
	}
	if o.Token == "" {
		missing = append(missing, "token (a bot's, $mattermost-token)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("give %s", strings.Join(missing, " and "))
	}
	return nil
}

// send posts the message, with its attachments, to the recipient channel
// (its ID).
func (o *MattermostOptions) send(ctx context.Context, _ string, n Notification, d Delivery) error {
	if d.Recipient == "" {
		return permanent("the subscription names no channel: give the channel's ID")
	}
	attachments := []any{}
	if m := n.Mattermost; m != nil && strings.TrimSpace(m.Attachments) != "" {
		if err := json.Unmarshal([]byte(m.Attachments), &attachments); err != nil {
			return permanent("template's mattermost.attachments is not a JSON array: %v", err)
		}
	}
	body, _ := json.Marshal(map[string]any{
		"channel_id": d.Recipient,
		"message":    n.Message,
		"props":      map[string]any{"attachments": attachments},
	})
	req, err := newRequest(http.MethodPost, strings.TrimRight(o.APIURL, "/")+"/api/v4/posts", body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+o.Token)
	_, err = do(ctx, httpClient(o.InsecureSkipVerify), req)
	return err
}
