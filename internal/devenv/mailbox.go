package devenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Mail is one message in the stack's SMTP mailbox, as Mailpit's API tells it.
type Mail struct {
	ID        string // Mailpit's
	MessageID string // the Message-ID header, without angle brackets
	From      string
	To        []string
	Subject   string
	Text      string // the plain-text body
	HTML      string // the HTML body
}

// Mailbox returns the messages in the stack's SMTP mailbox addressed to
// recipient (every message when empty), oldest first.
func (s *Stack) Mailbox(ctx context.Context, recipient string) ([]Mail, error) {
	if s.MailpitURL == "" {
		return nil, errors.New("mailbox: this stack has no mailpit (run hack/tools.sh, which builds it)")
	}
	var list struct {
		Messages []struct {
			ID      string
			From    *mail.Address
			To      []*mail.Address
			Subject string
			Created time.Time
		} `json:"messages"`
	}
	if err := s.mailpitGet(ctx, "/api/v1/messages?limit=1000", &list); err != nil {
		return nil, err
	}
	var out []Mail
	for _, m := range slices.Backward(list.Messages) { // the API lists newest first
		to := make([]string, 0, len(m.To))
		for _, a := range m.To {
			to = append(to, a.Address)
		}
		if recipient != "" && !slices.ContainsFunc(to, func(a string) bool { return strings.EqualFold(a, recipient) }) {
			continue
		}
		var full struct {
			MessageID string
			Text      string
			HTML      string
		}
		if err := s.mailpitGet(ctx, "/api/v1/message/"+url.PathEscape(m.ID), &full); err != nil {
			return nil, err
		}
		from := ""
		if m.From != nil {
			from = m.From.Address
		}
		out = append(out, Mail{ID: m.ID, MessageID: full.MessageID, From: from, To: to, Subject: m.Subject, Text: full.Text, HTML: full.HTML})
	}
	return out, nil
}

func (s *Stack) mailpitGet(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.MailpitURL+path, nil)
	if err != nil {
		return fmt.Errorf("mailbox: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("mailbox: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("mailbox: GET %s answered %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		return fmt.Errorf("mailbox: GET %s: %w", path, err)
	}
	return nil
}
