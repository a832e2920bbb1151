package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Delivery is one notification to send: what a trigger that fired sends
// to one destination.
type Delivery struct {
	// ID names this notification for good (the workflow that sends it):
	// webhook receivers get it as the X-Ferry-Notification header, so that
	// they can tell a retry from a new notification.
	ID        string   `json:"id"`
	Trigger   string   `json:"trigger"`
	Templates []string `json:"templates"`
	Service   string   `json:"service"`
	Recipient string   `json:"recipient,omitempty"`
}

// NotificationHeader carries Delivery.ID on webhook requests.
const NotificationHeader = "X-Ferry-Notification"

// PermanentError is a failure that retrying cannot mend: a template that
// fails, a service that is not configured, a receiver refusing the request.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// IsPermanent reports whether err is a PermanentError.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

func permanent(format string, args ...any) error {
	return &PermanentError{fmt.Errorf(format, args...)}
}

// sendTimeout bounds one request to a receiver.
const sendTimeout = 20 * time.Second

// Send renders the delivery's templates over the app's object (AppObject)
// and sends the notification through its service. An error never holds a
// secret: neither a resolved value nor a URL beyond its host.
func (c *Config) Send(ctx context.Context, d Delivery, appObject json.RawMessage, secrets *Secrets) error {
	if c == nil {
		return fmt.Errorf("notification %s: this worker has no notifications config (--notifications-config)", d.ID)
	}
	svc := c.services[d.Service]
	if svc == nil {
		return permanent("notification %s: no service.%s is configured", d.ID, d.Service)
	}
	obj, err := decodeApp(appObject)
	if err != nil {
		return permanent("notification %s: %w", d.ID, err)
	}
	vars := helpers(time.Now)
	vars["app"], vars["context"], vars["serviceType"], vars["recipient"] = obj, c.context, svc.typ, d.Recipient
	n, err := c.render(d.Templates, vars)
	if err != nil {
		return permanent("notification %s: %w", d.ID, err)
	}
	svc, err = svc.resolved(secrets)
	if err != nil {
		return permanent("notification %s: %w", d.ID, err)
	}
	if err = svc.opts.send(ctx, svc.name, n, d); err != nil {
		if IsPermanent(err) {
			return &PermanentError{fmt.Errorf("notification %s to %s: %w", d.ID, d.Service, err)}
		}
		return fmt.Errorf("notification %s to %s: %w", d.ID, d.Service, err)
	}
	return nil
}

func httpClient(insecure bool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if insecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the service's insecureSkipVerify asks for it
	}
	return &http.Client{Transport: t, Timeout: sendTimeout}
}

// do sends req and reads the answer. 2xx is done; 408, 429 and 5xx are
// worth another try; any other answer is permanent. Errors name the
// receiver by scheme and host only: a path may be a secret (Slack's).
func do(ctx context.Context, client *http.Client, req *http.Request) ([]byte, error) {
	where := req.URL.Scheme + "://" + req.URL.Host
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%s %s: %v", req.Method, where, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return body, nil
	}
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	err = fmt.Errorf("%s %s answered %d: %s", req.Method, where, resp.StatusCode, msg)
	if resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return nil, err
	}
	return nil, &PermanentError{err}
}

func newRequest(method, target string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(method, target, bytes.NewReader(body))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, permanent("not a valid request: %v", err)
	}
	return req, nil
}

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
