package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

func testApp(phase app.OperationPhase, health app.HealthStatusCode) json.RawMessage {
	a := app.Application{}
	a.Metadata.Name = "web"
	a.Metadata.Annotations = map[string]string{SubscribeAnnotation + "on-sync-failed.hook": "ops;dev"}
	a.Spec.Source = app.Source{RepoURL: "https://github.com/acme/web.git", Path: "app"}
	st := app.Status{Sync: app.SyncStatus{Status: app.SyncStatusOutOfSync, Revision: "abc123"}, Health: app.HealthStatus{Status: health}}
	if phase != "" {
		st.OperationState = &app.OperationState{ID: "3", Revision: "abc123", Phase: phase, Message: "sync failed in us-east-1"}
	}
	obj, err := AppObject(a, st)
	if err != nil {
		panic(err)
	}
	return obj
}

func configWith(t *testing.T, data map[string]string) *Config {
	t.Helper()
	c, err := FromData(data)
	require.NoError(t, err)
	return c
}

func TestParseNamesEveryProblem(t *testing.T) {
	_, err := FromData(map[string]string{
		"trigger.on-x":        "- when: app.status ==\n  send: [nope]",
		"template.t":          "message: '{{.app'",
		"service.email":       "host: smtp",
		"service.rocketchat":  "email: a@b",
		"service.teams":       "recipientUrls: {}",
		"service.opsgenie":    "apiUrl: api.opsgenie.com\napiKey: x",
		"service.webhook":     "url: http://x",
		"service.webhook.ok":  "url: ''",
		"subscriptions":       "- recipients: [x]",
		"defaultTriggers":     "[on-missing]",
		"template.bad-state":  "github: {status: {state: done}}",
		"service.github":      "token: $t\nappID: 1",
		"unknown.key":         "x",
		"template.other-only": "rocketchat: {attachments: x}\nmessage: hi",
	})
	require.Error(t, err)
	for _, want := range []string{
		`data["trigger.on-x"]: condition 0: "app.status =="`,
		`data["trigger.on-x"]: condition 0 sends template "nope"`,
		`data["template.t"]: message:`,
		`data["service.email"]: give port (587, 465 for implicit TLS, 25), from`,
		`data["service.rocketchat"]: service type "rocketchat": Ferry sends through email, github, googlechat, mattermost, opsgenie, pagerduty, pagerdutyv2, slack, teams, telegram, webhook`,
		`data["service.teams"]: recipientUrls is empty`,
		`data["service.opsgenie"]: error unmarshaling JSON: while decoding JSON: json: unknown field "apiKey"`,
		`data["service.webhook"]: a webhook service is named`,
		`data["service.webhook.ok"]: url is empty`,
		`data["subscriptions"]: subscription 0: recipient "x": no service.x is configured`,
		`data["defaultTriggers"]: trigger "on-missing"`,
		`data["template.bad-state"]: github.status.state "done"`,
		`data["service.github"]: give either appID`,
		`data["unknown.key"]: not a key Ferry reads`,
	} {
		require.Contains(t, err.Error(), want)
	}
	require.NotContains(t, err.Error(), "other-only", "another service's part of a template is read past")
}

func TestBuiltinTriggersAsArgoCDEvaluatesThem(t *testing.T) {
	c := configWith(t, map[string]string{"service.webhook.hook": "url: http://127.0.0.1:1"})
	subs := func(trigger string) []Subscription { return []Subscription{{Trigger: trigger, Service: "hook"}} }
	for _, tc := range []struct {
		trigger string
		phase   app.OperationPhase
		health  app.HealthStatusCode
		want    bool
	}{
		{"on-sync-failed", app.OperationFailed, app.HealthHealthy, true},
		{"on-sync-failed", app.OperationError, app.HealthHealthy, true},
		{"on-sync-failed", app.OperationSucceeded, app.HealthHealthy, false},
		{"on-sync-failed", "", app.HealthHealthy, false},
		{"on-sync-succeeded", app.OperationSucceeded, app.HealthDegraded, true},
		{"on-sync-running", app.OperationRunning, app.HealthHealthy, true},
		{"on-health-degraded", "", app.HealthDegraded, true},
		{"on-health-degraded", "", app.HealthProgressing, false},
		{"on-deployed", app.OperationSucceeded, app.HealthHealthy, true},
		{"on-deployed", app.OperationSucceeded, app.HealthProgressing, false},
		{"on-created", "", app.HealthProgressing, true},
		{"on-deleted", "", app.HealthHealthy, false},
		{"on-sync-status-unknown", app.OperationSucceeded, app.HealthHealthy, false},
	} {
		res, problems := c.Evaluate(testApp(tc.phase, tc.health), subs(tc.trigger), time.Now())
		require.Empty(t, problems)
		require.Len(t, res, 1)
		require.Equal(t, tc.want, res[0].Triggered, "%s with %q %q", tc.trigger, tc.phase, tc.health)
		switch {
		case tc.trigger == "on-created":
			require.Equal(t, "web", res[0].OncePer, "once per app")
		case tc.want && tc.trigger != "on-health-degraded":
			require.Equal(t, "abc123", res[0].OncePer, "once per revision")
			require.True(t, strings.HasPrefix(res[0].Key, "abc123:"+tc.trigger+":[0]."), res[0].Key)
		}
	}
	_, problems := c.Evaluate(testApp("", ""), []Subscription{{Trigger: "on-nothing", Service: "hook"}, {Trigger: "on-deployed", Service: "mail"}}, time.Now())
	require.Len(t, problems, 2)
}

func TestSubscriptionsFromAnnotations(t *testing.T) {
	require.Equal(t, []Subscription{
		{Service: "hook", Recipient: "x"},
		{Trigger: "on-deployed", Service: "slack", Recipient: "a"}, {Trigger: "on-deployed", Service: "slack", Recipient: "b"},
		{Trigger: "on-sync-failed", Service: "github"},
	}, Subscriptions(map[string]string{
		SubscribeAnnotation + "on-sync-failed.github": "",
		SubscribeAnnotation + "on-deployed.slack":     "a; b",
		SubscribeAnnotation + "hook":                  "x",
		"other":                                       "y",
	}))
}

// Transition: sent when the condition begins to hold, not again while it
// holds; once it stops holding it is sent the next time; with oncePer,
// once per value for good.
func TestTransitionSendsOncePerEvent(t *testing.T) {
	var seq int64
	degraded := Result{Key: "on-health-degraded:[0].h:hook:", Triggered: true}
	healthy := degraded
	healthy.Triggered = false
	state, send := Transition(nil, []Result{degraded}, &seq)
	require.Len(t, send, 1)
	state, send = Transition(state, []Result{degraded}, &seq)
	require.Empty(t, send, "still Degraded: not again")
	state, send = Transition(state, []Result{healthy}, &seq)
	require.Empty(t, send)
	require.Empty(t, state, "forgotten once Healthy")
	_, send = Transition(state, []Result{degraded}, &seq)
	require.Len(t, send, 1, "Degraded again: a new event")
	require.EqualValues(t, 2, seq)

	failed := Result{Key: "abc:on-sync-failed:[0].h:hook:", OncePer: "abc", Triggered: true}
	notNow := Result{Key: "on-sync-failed:[0].h:hook:"}
	state, send = Transition(nil, []Result{failed}, &seq)
	require.Len(t, send, 1)
	state, _ = Transition(state, []Result{notNow}, &seq)
	_, send = Transition(state, []Result{failed}, &seq)
	require.Empty(t, send, "once per revision")
}

// A webhook receiver gets the template's request, the service's headers
// with their $secret resolved, and the notification's ID; a 503 is worth
// another try, a 400 is not; no error holds the secret or the URL's path.
func TestSendWebhook(t *testing.T) {
	var got []string
	status := http.StatusServiceUnavailable
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("X-Token")+" "+r.Header.Get(NotificationHeader)+" "+string(body))
		w.WriteHeader(status)
	}))
	defer srv.Close()
	c := configWith(t, map[string]string{
		"service.webhook.hook": "url: " + srv.URL + "/s3cr3t-path\nheaders: [{name: X-Token, value: $hook-token}]",
		"template.app-sync-failed": `webhook:
  hook:
    method: PUT
    path: /apps/{{.app.metadata.name}}
    body: '{{.app.status.operationState.syncResult.revision}} {{.recipient}} {{.context.env}} {{call .repo.FullNameByRepoURL .app.spec.source.repoURL}}'`,
		"context": "env: prod",
	})
	secrets := &Secrets{Env: func(k string) (string, bool) { return "tok-9", k == "FERRY_NOTIFY_HOOK_TOKEN" }}
	require.NoError(t, c.CheckSecrets(secrets))
	d := Delivery{ID: "app/web/notify/1", Trigger: "on-sync-failed", Templates: []string{"app-sync-failed"}, Service: "hook", Recipient: "ops"}
	err := c.Send(context.Background(), d, testApp(app.OperationFailed, app.HealthHealthy), secrets)
	require.Error(t, err)
	require.False(t, IsPermanent(err), err)
	require.Contains(t, err.Error(), "answered 503")
	require.NotContains(t, err.Error(), "s3cr3t")
	require.NotContains(t, err.Error(), "tok-9")
	status = http.StatusOK
	require.NoError(t, c.Send(context.Background(), d, testApp(app.OperationFailed, app.HealthHealthy), secrets))
	require.Equal(t, "PUT /s3cr3t-path/apps/web tok-9 app/web/notify/1 abc123 ops prod acme/web", got[1])
	status = http.StatusBadRequest
	require.True(t, IsPermanent(c.Send(context.Background(), d, testApp(app.OperationFailed, app.HealthHealthy), secrets)))

	err = configWith(t, map[string]string{"service.webhook.hook": "url: http://x\nbasicAuth: {username: u, password: $pw}"}).CheckSecrets(&Secrets{Env: func(string) (string, bool) { return "", false }})
	require.ErrorContains(t, err, `service "hook": $pw not found: set FERRY_NOTIFY_PW in the worker's environment`)
}

// Slack: an incoming webhook gets the message with its attachments.
func TestSendSlackIncomingWebhook(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
	}))
	defer srv.Close()
	c := configWith(t, map[string]string{
		"service.slack": "webhookURL: $slack-url\nusername: ferry",
		"template.app-sync-failed": `message: '{{.app.metadata.name}} failed'
slack:
  attachments: '[{"title": "{{.app.metadata.name}}", "color": "#E96D76"}]'`,
	})
	secrets := &Secrets{Env: func(k string) (string, bool) { return srv.URL + "/services/T/B/X", k == "FERRY_NOTIFY_SLACK_URL" }}
	d := Delivery{ID: "n", Templates: []string{"app-sync-failed"}, Service: "slack"}
	require.NoError(t, c.Send(context.Background(), d, testApp(app.OperationFailed, app.HealthHealthy), secrets))
	require.Equal(t, "web failed", got["text"])
	require.Equal(t, "ferry", got["username"])
	require.Equal(t, []any{map[string]any{"title": "web", "color": "#E96D76"}}, got["attachments"])
}

// GitHub: the built-in template's commit status on the operation's revision.
func TestSendGitHubCommitStatusWithAToken(t *testing.T) {
	var path, auth string
	var body map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, auth = r.URL.Path, r.Header.Get("Authorization")
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	c := configWith(t, map[string]string{"service.github": "token: $gh\nenterpriseBaseURL: " + srv.URL})
	secrets := &Secrets{Env: func(k string) (string, bool) { return "ghp_x", k == "FERRY_NOTIFY_GH" }}
	d := Delivery{ID: "n", Templates: []string{"app-sync-failed"}, Service: "github"}
	require.NoError(t, c.Send(context.Background(), d, testApp(app.OperationFailed, app.HealthHealthy), secrets))
	require.Equal(t, "/api/v3/repos/acme/web/statuses/abc123", path)
	require.Equal(t, "token ghp_x", auth)
	require.Equal(t, "error", body["state"])
	require.Equal(t, "continuous-delivery/web", body["context"])
}
