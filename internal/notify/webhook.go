package notify

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// WebhookOptions are service.webhook.<name>'s.
type WebhookOptions struct {
	URL                string     `json:"url"`
	Headers            []Header   `json:"headers,omitempty"`
	BasicAuth          *BasicAuth `json:"basicAuth,omitempty"`
	InsecureSkipVerify bool       `json:"insecureSkipVerify,omitempty"`
	// Argo CD's in-process retries: Ferry's notification activity retries
	// instead (durably), so these are read and not used.
	RetryWaitMin string `json:"retryWaitMin,omitempty"`
	RetryWaitMax string `json:"retryWaitMax,omitempty"`
	RetryMax     int    `json:"retryMax,omitempty"`
	transportOptions
}

type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type BasicAuth struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

func (o *WebhookOptions) check() error {
	if o.URL == "" {
		return fmt.Errorf("url is empty; give the URL requests go to")
	}
	return nil
}

// send makes the request the template's webhook.<name> describes (or a GET
// of the message) of the service's URL.
func (o *WebhookOptions) send(ctx context.Context, name string, n Notification, d Delivery) error {
	method, target, body := http.MethodGet, o.URL, n.Message
	if w, ok := n.Webhook[name]; ok {
		body = w.Body
		if w.Method != "" {
			method = w.Method
		}
		if w.Path != "" {
			target = strings.TrimRight(target, "/") + "/" + strings.TrimLeft(w.Path, "/")
		}
	}
	req, err := newRequest(method, target, []byte(body))
	if err != nil {
		return err
	}
	for _, h := range o.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	if o.BasicAuth != nil {
		req.SetBasicAuth(o.BasicAuth.Username, o.BasicAuth.Password)
	}
	req.Header.Set(NotificationHeader, d.ID)
	_, err = do(ctx, httpClient(o.InsecureSkipVerify), req)
	return err
}
