package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// request is what a loopback receiver standing for a service's API saw.
type request struct {
	Method, Path, Query string
	Header              http.Header
	Body                map[string]any
}

// receiver records every request and answers each with answer.
type recorder struct {
	mu       sync.Mutex
	requests []request
	answer   string
	status   int
}

func newRecorder(t *testing.T, answer string) (*recorder, string) {
	r := &recorder{answer: answer, status: http.StatusOK}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	raw, _ := io.ReadAll(req.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, request{req.Method, req.URL.Path, req.URL.RawQuery, req.Header.Clone(), body})
	w.WriteHeader(r.status)
	_, _ = w.Write([]byte(r.answer))
}

func (r *recorder) only(t *testing.T) request {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(t, r.requests, 1)
	return r.requests[0]
}

// sendWith sends the templates' notification of a failed sync of app web
// through the one service data configures, its secrets from env.
func sendWith(t *testing.T, data map[string]string, service, recipient string, env map[string]string, templates ...string) error {
	t.Helper()
	c := configWith(t, data)
	secrets := &Secrets{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	require.NoError(t, c.CheckSecrets(secrets))
	if len(templates) == 0 {
		templates = []string{"app-sync-failed"}
	}
	d := Delivery{ID: "app/web/notify/7", Trigger: "on-sync-failed", Templates: templates, Service: service, Recipient: recipient}
	return c.Send(context.Background(), d, testApp(app.OperationFailed, app.HealthHealthy), secrets)
}

func TestSendTeams(t *testing.T) {
	r, url := newRecorder(t, "1")
	err := sendWith(t, map[string]string{"service.teams": "recipientUrls:\n  ops: $teams-ops"}, "teams", "ops",
		map[string]string{"FERRY_NOTIFY_TEAMS_OPS": url + "/webhookb2/secret-part"})
	require.NoError(t, err)
	got := r.only(t)
	require.Equal(t, "POST /webhookb2/secret-part", got.Method+" "+got.Path)
	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	require.Equal(t, "MessageCard", got.Body["@type"])
	require.Equal(t, "Sync of web failed", got.Body["title"])
	require.Equal(t, "#e96d76", got.Body["themeColor"])
	facts := got.Body["sections"].([]any)[0].(map[string]any)["facts"].([]any)
	require.Equal(t, map[string]any{"name": "Repository", "value": "https://github.com/acme/web.git"}, facts[2])
	require.Contains(t, got.Body["text"], "The sync of application web to revision abc123 failed")

	r.answer = "Webhook message delivery failed with error: Microsoft Teams endpoint returned HTTP error 413"
	err = sendWith(t, map[string]string{"service.teams": "recipientUrls:\n  ops: " + url}, "teams", "ops", nil)
	require.True(t, IsPermanent(err), "%v", err)
	require.ErrorContains(t, err, "Teams did not take the card: Webhook message delivery failed")
	err = sendWith(t, map[string]string{"service.teams": "recipientUrls:\n  ops: " + url}, "teams", "dev", nil)
	require.ErrorContains(t, err, `recipient "dev" is not in service.teams's recipientUrls; add it there or subscribe one of ops`)
}

func TestSendOpsgenie(t *testing.T) {
	r, url := newRecorder(t, `{"result": "Request will be processed", "requestId": "r1"}`)
	r.status = http.StatusAccepted
	err := sendWith(t, map[string]string{
		"service.opsgenie": "apiUrl: " + url + "\napiKeys:\n  web-team: $opsgenie-web",
		"template.alert": `message: '{{.app.metadata.name}} has a problem'
opsgenie:
  description: 'Sync: {{.app.status.operationState.phase}}'
  priority: P1
  tags: [deploy, '{{.app.metadata.name}}']
  details: {revision: '{{.app.status.sync.revision}}'}
  visibleTo: [{Type: team, Name: sre}]`,
	}, "opsgenie", "web-team", map[string]string{"FERRY_NOTIFY_OPSGENIE_WEB": "og-key-1"}, "alert")
	require.NoError(t, err)
	got := r.only(t)
	require.Equal(t, "POST /v2/alerts", got.Method+" "+got.Path)
	require.Equal(t, "GenieKey og-key-1", got.Header.Get("Authorization"))
	require.Equal(t, "web has a problem", got.Body["message"])
	require.Equal(t, "Sync: Failed", got.Body["description"])
	require.Equal(t, "P1", got.Body["priority"])
	require.Equal(t, "app/web/notify/7", got.Body["alias"], "one alert however often it is retried")
	require.Equal(t, []any{"deploy", "web"}, got.Body["tags"])
	require.Equal(t, map[string]any{"revision": "abc123"}, got.Body["details"])
	require.Equal(t, []any{map[string]any{"type": "team", "name": "web-team"}}, got.Body["responders"])
	require.Equal(t, []any{map[string]any{"type": "team", "name": "sre"}}, got.Body["visibleTo"])
	require.Equal(t, "Ferry", got.Body["source"])
}

func TestSendPagerDutyV2(t *testing.T) {
	r, url := newRecorder(t, `{"status": "success", "message": "Event processed"}`)
	r.status = http.StatusAccepted
	err := sendWith(t, map[string]string{
		"service.pagerdutyv2": "apiURL: " + url + "\nserviceKeys:\n  checkout: $pd-checkout",
		"template.page": `message: unused
pagerdutyv2:
  summary: 'Sync of {{.app.metadata.name}} failed'
  severity: critical
  source: '{{.app.metadata.name}}'
  component: '{{.app.spec.source.path}}'
  url: 'https://cd.example.com/applications/{{.app.metadata.name}}'`,
	}, "pagerdutyv2", "checkout", map[string]string{"FERRY_NOTIFY_PD_CHECKOUT": "R0UT1NG"}, "page")
	require.NoError(t, err)
	got := r.only(t)
	require.Equal(t, "POST /v2/enqueue", got.Method+" "+got.Path)
	require.Equal(t, "R0UT1NG", got.Body["routing_key"])
	require.Equal(t, "trigger", got.Body["event_action"])
	require.Equal(t, "app/web/notify/7", got.Body["dedup_key"], "one incident however often it is retried")
	require.Equal(t, "https://cd.example.com/applications/web", got.Body["client_url"])
	require.Equal(t, map[string]any{"summary": "Sync of web failed", "severity": "critical", "source": "web", "component": "app"}, got.Body["payload"])

	err = sendWith(t, map[string]string{"service.pagerdutyv2": "apiURL: " + url + "\nserviceKeys: {checkout: k}"}, "pagerdutyv2", "checkout", nil)
	require.True(t, IsPermanent(err))
	require.ErrorContains(t, err, "the templates have no pagerdutyv2 part")
}

func TestSendTelegram(t *testing.T) {
	r, url := newRecorder(t, `{"ok": true, "result": {"message_id": 1}}`)
	data := map[string]string{"service.telegram": "token: $telegram-token\napiURL: " + url}
	env := map[string]string{"FERRY_NOTIFY_TELEGRAM_TOKEN": "123:ABC"}
	require.NoError(t, sendWith(t, data, "telegram", "-1001234|42", env))
	got := r.only(t)
	require.Equal(t, "POST /bot123:ABC/sendMessage", got.Method+" "+got.Path)
	require.Equal(t, float64(-1001234), got.Body["chat_id"])
	require.Equal(t, float64(42), got.Body["message_thread_id"])
	require.Equal(t, "Markdown", got.Body["parse_mode"])
	require.Contains(t, got.Body["text"], "The sync of application web to revision abc123 failed")

	r.requests = nil
	require.NoError(t, sendWith(t, data, "telegram", "deploys", env))
	require.Equal(t, "@deploys", r.only(t).Body["chat_id"])

	r.answer = `{"ok": false, "description": "Bad Request: chat not found"}`
	err := sendWith(t, data, "telegram", "deploys", env)
	require.ErrorContains(t, err, "sendMessage: Bad Request: chat not found")
	require.NotContains(t, err.Error(), "123:ABC", "the token is in the URL's path, never in an error")
}

func TestSendMattermost(t *testing.T) {
	r, url := newRecorder(t, `{"id": "p1"}`)
	r.status = http.StatusCreated
	err := sendWith(t, map[string]string{
		"service.mattermost": "apiURL: " + url + "\ntoken: $mattermost-token",
		"template.post":      "message: '{{.app.metadata.name}} failed'\nmattermost:\n  attachments: '[{\"title\": \"{{.app.metadata.name}}\", \"color\": \"#E96D76\"}]'",
	}, "mattermost", "chan-9", map[string]string{"FERRY_NOTIFY_MATTERMOST_TOKEN": "mm-tok"}, "post")
	require.NoError(t, err)
	got := r.only(t)
	require.Equal(t, "POST /api/v4/posts", got.Method+" "+got.Path)
	require.Equal(t, "Bearer mm-tok", got.Header.Get("Authorization"))
	require.Equal(t, "chan-9", got.Body["channel_id"])
	require.Equal(t, "web failed", got.Body["message"])
	require.Equal(t, map[string]any{"attachments": []any{map[string]any{"title": "web", "color": "#E96D76"}}}, got.Body["props"])
}

func TestSendGoogleChat(t *testing.T) {
	r, url := newRecorder(t, `{"name": "spaces/S/messages/M"}`)
	data := map[string]string{
		"service.googlechat": "webhooks:\n  deploys: $gchat-deploys",
		"template.card": `googlechat:
  threadKey: '{{.app.metadata.name}}'
  cardsV2: |
    - header:
        title: '{{.app.metadata.name}} failed'
      sections:
        - widgets:
            - decoratedText: {topLabel: Revision, text: '{{.app.status.sync.revision}}'}`,
	}
	env := map[string]string{"FERRY_NOTIFY_GCHAT_DEPLOYS": url + "/v1/spaces/S/messages?key=K&token=T"}
	require.NoError(t, sendWith(t, data, "googlechat", "deploys", env, "card"))
	got := r.only(t)
	require.Equal(t, "POST /v1/spaces/S/messages", got.Method+" "+got.Path)
	require.Equal(t, "key=K&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD&threadKey=web&token=T", got.Query)
	cards := got.Body["cardsV2"].([]any)
	require.Len(t, cards, 1)
	card := cards[0].(map[string]any)
	require.NotEmpty(t, card["cardId"])
	require.Equal(t, map[string]any{"title": "web failed"}, card["card"].(map[string]any)["header"])
	require.Nil(t, got.Body["text"])

	r.requests = nil
	require.NoError(t, sendWith(t, data, "googlechat", "deploys", env))
	require.Contains(t, r.only(t).Body["text"], "The sync of application web to revision abc123 failed")

	r.answer = `{"error": {"code": 400, "message": "Invalid JSON payload", "status": "INVALID_ARGUMENT"}}`
	err := sendWith(t, data, "googlechat", "deploys", env)
	require.ErrorContains(t, err, "Google Chat: 400 INVALID_ARGUMENT: Invalid JSON payload")
	require.NotContains(t, err.Error(), "token=T")
}

// The email's headers and body: the template's subject on one line, the
// message as the body, quoted-printable, and a Message-ID made of the
// notification's ID (the same on a retry).
func TestComposeEmail(t *testing.T) {
	from, err := mail.ParseAddress("Ferry <ferry@example.com>")
	require.NoError(t, err)
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	raw := composeEmail(from, []string{"a@example.com", "b@example.com"}, "Sync of web failed\n", "Längere Nachricht\nzweite Zeile", false, "app/web/notify/7", at)
	msg, err := mail.ReadMessage(strings.NewReader(string(raw)))
	require.NoError(t, err)
	require.Equal(t, `"Ferry" <ferry@example.com>`, msg.Header.Get("From"))
	require.Equal(t, "a@example.com, b@example.com", msg.Header.Get("To"))
	require.Equal(t, "Sync of web failed", msg.Header.Get("Subject"))
	require.Equal(t, "app/web/notify/7", msg.Header.Get(NotificationHeader))
	require.Equal(t, "text/plain; charset=UTF-8", msg.Header.Get("Content-Type"))
	again := composeEmail(from, []string{"a@example.com"}, "x", "y", true, "app/web/notify/7", at.Add(time.Hour))
	msg2, err := mail.ReadMessage(strings.NewReader(string(again)))
	require.NoError(t, err)
	require.Equal(t, msg.Header.Get("Message-ID"), msg2.Header.Get("Message-ID"))
	require.Equal(t, "text/html; charset=UTF-8", msg2.Header.Get("Content-Type"))
	body, err := io.ReadAll(msg.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), "L=C3=A4ngere Nachricht\r\nzweite Zeile")
}

func TestSendPagerDuty(t *testing.T) {
	r, url := newRecorder(t, `{"incident": {"id": "Q1"}}`)
	r.status = http.StatusCreated
	service := "apiURL: " + url + "\ntoken: $pagerdutyToken\nfrom: oncall@example.com"
	err := sendWith(t, map[string]string{
		"service.pagerduty": service,
		"template.page": `message: unused
pagerduty:
  title: 'Sync of {{.app.metadata.name}} failed'
  urgency: high
  body: 'app {{.app.metadata.name}}: {{.app.status.operationState.phase}}'
  priorityID: P53ZZH5`,
	}, "pagerduty", "PSERVICE", map[string]string{"FERRY_NOTIFY_PAGERDUTYTOKEN": "t0ken"}, "page")
	require.NoError(t, err)
	got := r.only(t)
	require.Equal(t, "POST /incidents", got.Method+" "+got.Path)
	require.Equal(t, "Token token=t0ken", got.Header.Get("Authorization"))
	require.Equal(t, "oncall@example.com", got.Header.Get("From"))
	require.Equal(t, map[string]any{
		"type": "incident", "title": "Sync of web failed", "urgency": "high",
		"service":      map[string]any{"id": "PSERVICE", "type": "service_reference"},
		"incident_key": "app/web/notify/7",
		"body":         map[string]any{"type": "incident_body", "details": "app web: Failed"},
		"priority":     map[string]any{"id": "P53ZZH5", "type": "priority_reference"},
	}, got.Body["incident"], "one incident however often it is retried: its key is the notification's")

	err = sendWith(t, map[string]string{"service.pagerduty": service}, "pagerduty", "PSERVICE", map[string]string{"FERRY_NOTIFY_PAGERDUTYTOKEN": "t"})
	require.True(t, IsPermanent(err))
	require.ErrorContains(t, err, "the templates have no pagerduty part with a title")

	c, err := FromData(map[string]string{"service.pagerduty": "token: x"})
	require.Nil(t, c)
	require.ErrorContains(t, err, "from (the email of a PagerDuty user of the account)")
}
