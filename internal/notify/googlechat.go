package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// GoogleChatOptions are service.googlechat's: an incoming webhook's URL
// per recipient (a space's name in the subscription).
type GoogleChatOptions struct {
	Webhooks           map[string]string `json:"webhooks"`
	InsecureSkipVerify bool              `json:"insecureSkipVerify,omitempty"`
	transportOptions
}

// GoogleChatTemplate is a template's googlechat part: cards (cardsV2, or
// the legacy cards), YAML or JSON, and the thread to post in.
type GoogleChatTemplate struct {
	Cards     string `json:"cards,omitempty"`
	CardsV2   string `json:"cardsV2,omitempty"`
	ThreadKey string `json:"threadKey,omitempty"`
}

func (o *GoogleChatOptions) check() error {
	if len(o.Webhooks) == 0 {
		return fmt.Errorf("webhooks is empty; map each space (the subscription's recipient) to its webhook's URL ($space-webhook-url)")
	}
	return nil
}

type googleChatMessage struct {
	Text    string `json:"text,omitempty"`
	Cards   []any  `json:"cards,omitempty"`
	CardsV2 []any  `json:"cardsV2,omitempty"`
}

// send posts a text, or the template's cards, to the recipient's webhook;
// a threadKey replies in that thread (or starts it).
func (o *GoogleChatOptions) send(ctx context.Context, _ string, n Notification, d Delivery) error {
	target, err := recipientEntry(o.Webhooks, d.Recipient, "webhooks", TypeGoogleChat)
	if err != nil {
		return err
	}
	msg, thread, err := googleChatBody(n, d.ID)
	if err != nil {
		return err
	}
	u, err := url.Parse(target)
	if err != nil {
		return permanent("the webhook of %q is not a URL", d.Recipient)
	}
	if thread != "" {
		q := u.Query()
		q.Set("threadKey", thread)
		q.Set("messageReplyOption", "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD")
		u.RawQuery = q.Encode()
	}
	body, _ := json.Marshal(msg)
	req, err := newRequest(http.MethodPost, u.String(), body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	answer, err := do(ctx, httpClient(o.InsecureSkipVerify), req)
	if err != nil {
		return err
	}
	var out struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal(answer, &out) == nil && out.Error != nil {
		return permanent("Google Chat: %d %s: %s", out.Error.Code, out.Error.Status, out.Error.Message)
	}
	return nil
}

// googleChatBody is the message: the cards when the template has any, else
// the text. Each card of cardsV2 gets an ID made of the notification's.
func googleChatBody(n Notification, id string) (googleChatMessage, string, error) {
	g := n.GoogleChat
	if g == nil || strings.TrimSpace(g.Cards+g.CardsV2) == "" {
		var thread string
		if g != nil {
			thread = g.ThreadKey
		}
		return googleChatMessage{Text: n.Message}, thread, nil
	}
	var msg googleChatMessage
	if strings.TrimSpace(g.CardsV2) != "" {
		var cards []any
		if err := yaml.Unmarshal([]byte(g.CardsV2), &cards); err != nil {
			return msg, "", permanent("template's googlechat.cardsV2 is not a list of cards (YAML or JSON): %v", err)
		}
		sum := sha256.Sum256([]byte(id))
		for i, c := range cards {
			msg.CardsV2 = append(msg.CardsV2, map[string]any{"cardId": hex.EncodeToString(sum[:8]) + "-" + strconv.Itoa(i), "card": c})
		}
	}
	if strings.TrimSpace(g.Cards) != "" {
		if err := yaml.Unmarshal([]byte(g.Cards), &msg.Cards); err != nil {
			return msg, "", permanent("template's googlechat.cards is not a list of cards (YAML or JSON): %v", err)
		}
	}
	return msg, g.ThreadKey, nil
}
