package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

const slackAPIURL = "https://slack.com/api/"

// SlackOptions are service.slack's: a bot token (chat.postMessage on
// apiURL, to the recipient channel) or an incoming webhook's URL.
type SlackOptions struct {
	Token              string `json:"token,omitempty"`
	APIURL             string `json:"apiURL,omitempty"`
	WebhookURL         string `json:"webhookURL,omitempty"`
	Username           string `json:"username,omitempty"`
	Icon               string `json:"icon,omitempty"`
	SigningSecret      string `json:"signingSecret,omitempty"`
	InsecureSkipVerify bool   `json:"insecureSkipVerify,omitempty"`
	DisableUnfurl      bool   `json:"disableUnfurl,omitempty"`
	transportOptions
}

func (o *SlackOptions) check() error {
	if o.Token == "" && o.WebhookURL == "" {
		return fmt.Errorf("give token (a bot token, $secret) or webhookURL (an incoming webhook)")
	}
	return nil
}

type slackMessage struct {
	Channel     string          `json:"channel,omitempty"`
	Text        string          `json:"text"`
	Attachments json.RawMessage `json:"attachments,omitempty"`
	Blocks      json.RawMessage `json:"blocks,omitempty"`
	Username    string          `json:"username,omitempty"`
	IconEmoji   string          `json:"icon_emoji,omitempty"`
	IconURL     string          `json:"icon_url,omitempty"`
	UnfurlLinks *bool           `json:"unfurl_links,omitempty"`
}

// send posts the message to an incoming webhook, or with the bot token to
// chat.postMessage for the recipient channel.
func (o *SlackOptions) send(ctx context.Context, _ string, n Notification, d Delivery) error {
	msg := slackMessage{Channel: d.Recipient, Text: n.Message, Username: o.Username}
	if strings.HasPrefix(o.Icon, ":") {
		msg.IconEmoji = o.Icon
	} else if o.Icon != "" {
		msg.IconURL = o.Icon
	}
	if o.DisableUnfurl {
		f := false
		msg.UnfurlLinks = &f
	}
	if s := n.Slack; s != nil {
		for field, src := range map[string]string{"attachments": s.Attachments, "blocks": s.Blocks} {
			if strings.TrimSpace(src) == "" {
				continue
			}
			var v []any
			if err := json.Unmarshal([]byte(src), &v); err != nil {
				return permanent("template's slack.%s is not a JSON array: %v", field, err)
			}
			if field == "attachments" {
				msg.Attachments = json.RawMessage(src)
			} else {
				msg.Blocks = json.RawMessage(src)
			}
		}
	}
	target := o.WebhookURL
	if target == "" {
		if d.Recipient == "" {
			return permanent("chat.postMessage needs a channel: give it as the subscription's recipient")
		}
		base := o.APIURL
		if base == "" {
			base = slackAPIURL
		}
		target = strings.TrimRight(base, "/") + "/chat.postMessage"
	} else if d.Recipient == "" {
		msg.Channel = ""
	}
	body, _ := json.Marshal(msg)
	req, err := newRequest(http.MethodPost, target, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	if o.WebhookURL == "" {
		req.Header.Set("Authorization", "Bearer "+o.Token)
	}
	answer, err := do(ctx, httpClient(o.InsecureSkipVerify), req)
	if err != nil || o.WebhookURL != "" {
		return err
	}
	var out struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(answer, &out); err != nil {
		return fmt.Errorf("chat.postMessage: not Slack's answer: %v", err)
	}
	if !out.OK {
		if out.Error == "ratelimited" {
			return fmt.Errorf("chat.postMessage: %s", out.Error)
		}
		return permanent("chat.postMessage: %s", out.Error)
	}
	return nil
}
