package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// Template is a template.<name> of the ConfigMap: Go templates over the
// app (.app), the ConfigMap's context (.context), the service type
// (.serviceType) and the recipient (.recipient).
type Template struct {
	name    string
	Message string                     `json:"message,omitempty"`
	Title   string                     `json:"title,omitempty"`
	Webhook map[string]WebhookTemplate `json:"webhook,omitempty"`
	Slack   *SlackTemplate             `json:"slack,omitempty"`
	GitHub  *GitHubTemplate            `json:"github,omitempty"`
}

// WebhookTemplate is the request a template makes of one webhook service.
type WebhookTemplate struct {
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	Body   string `json:"body,omitempty"`
}

// SlackTemplate holds Slack's parts of a message; attachments and blocks
// are JSON arrays, as Slack's API takes them.
type SlackTemplate struct {
	Attachments     string `json:"attachments,omitempty"`
	Blocks          string `json:"blocks,omitempty"`
	GroupingKey     string `json:"groupingKey,omitempty"`
	NotifyBroadcast bool   `json:"notifyBroadcast,omitempty"`
	DeliveryPolicy  string `json:"deliveryPolicy,omitempty"`
}

// GitHubTemplate says which commit of which repository gets a status.
type GitHubTemplate struct {
	RepoURLPath  string        `json:"repoURLPath,omitempty"`
	RevisionPath string        `json:"revisionPath,omitempty"`
	Status       *GitHubStatus `json:"status,omitempty"`
}

// GitHubStatus is a commit status: state is error, failure, pending or success.
type GitHubStatus struct {
	State     string `json:"state,omitempty"`
	Label     string `json:"label,omitempty"`
	TargetURL string `json:"targetURL,omitempty"`
}

// Parts of a template that belong to services Ferry does not send through
// (Argo CD's catalog has them): read past, never sent.
var otherServiceParts = map[string]bool{
	"email": true, "teams": true, "teams-workflows": true, "googlechat": true, "mattermost": true, "opsgenie": true,
	"pagerduty": true, "pagerdutyv2": true, "alertmanager": true, "telegram": true, "rocketchat": true, "webex": true,
	"newrelic": true, "grafana": true, "gitlab": true, "awssqs": true, "pushover": true, "matrix": true, "datadog": true,
}

func parseTemplate(name, value string) (*Template, error) {
	var raw map[string]json.RawMessage
	if err := yaml.Unmarshal([]byte(value), &raw); err != nil {
		return nil, fmt.Errorf("not a template {message, title, webhook, slack, github}: %w", err)
	}
	ours := map[string]json.RawMessage{}
	for k, v := range raw {
		if !otherServiceParts[k] {
			ours[k] = v
		}
	}
	data, _ := json.Marshal(ours)
	t := &Template{name: name}
	if err := yaml.UnmarshalStrict(data, t); err != nil {
		return nil, fmt.Errorf("not a template {message, title, webhook, slack, github}: %w", err)
	}
	if t.GitHub != nil && t.GitHub.Status != nil {
		if s := t.GitHub.Status.State; s != "" && !strings.Contains(s, "{{") && !validGitHubState[s] {
			return nil, fmt.Errorf("github.status.state %q: GitHub takes error, failure, pending or success", s)
		}
	}
	// Every field must parse now, not when a notification is due.
	var errs []string
	t.each(func(field, src string) {
		if _, err := parseText(src); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", field, err))
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return t, nil
}

var validGitHubState = map[string]bool{"error": true, "failure": true, "pending": true, "success": true}

// each calls f with every templated field of t.
func (t *Template) each(f func(field, src string)) {
	f("message", t.Message)
	f("title", t.Title)
	for _, name := range sortedKeys(t.Webhook) {
		w := t.Webhook[name]
		f("webhook."+name+".path", w.Path)
		f("webhook."+name+".body", w.Body)
	}
	if s := t.Slack; s != nil {
		f("slack.attachments", s.Attachments)
		f("slack.blocks", s.Blocks)
		f("slack.groupingKey", s.GroupingKey)
	}
	if g := t.GitHub; g != nil {
		f("github.repoURLPath", g.RepoURLPath)
		f("github.revisionPath", g.RevisionPath)
		if s := g.Status; s != nil {
			f("github.status.state", s.State)
			f("github.status.label", s.Label)
			f("github.status.targetURL", s.TargetURL)
		}
	}
}

// templateFuncs are Sprig's (less what reads the environment or the
// network) and Argo CD's time, strings and repo helpers.
var templateFuncs = func() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName"} {
		delete(f, name)
	}
	return f
}()

func parseText(src string) (*template.Template, error) {
	return template.New("").Funcs(templateFuncs).Option("missingkey=zero").Parse(src)
}

// Notification is what the templates a trigger sends rendered for one app.
type Notification struct {
	Message string
	Title   string
	Webhook map[string]WebhookTemplate
	Slack   *SlackTemplate
	GitHub  *GitHubTemplate
}

// render runs the named templates over vars, later ones adding to (and
// replacing the fields of) earlier ones, as Argo CD merges them.
func (c *Config) render(names []string, vars map[string]any) (Notification, error) {
	var n Notification
	for _, name := range names {
		t := c.templates[name]
		if t == nil {
			return n, fmt.Errorf("template %q is not configured", name)
		}
		var errs []string
		out := map[string]string{}
		t.each(func(field, src string) {
			s, err := execute(src, vars)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", field, err))
			}
			out[field] = s
		})
		if len(errs) > 0 {
			return n, fmt.Errorf("template %q: %s", name, strings.Join(errs, "; "))
		}
		if t.Message != "" {
			n.Message = out["message"]
		}
		if t.Title != "" {
			n.Title = out["title"]
		}
		for _, wh := range sortedKeys(t.Webhook) {
			if n.Webhook == nil {
				n.Webhook = map[string]WebhookTemplate{}
			}
			n.Webhook[wh] = WebhookTemplate{Method: t.Webhook[wh].Method,
				Path: out["webhook."+wh+".path"], Body: out["webhook."+wh+".body"]}
		}
		if s := t.Slack; s != nil {
			n.Slack = &SlackTemplate{Attachments: out["slack.attachments"], Blocks: out["slack.blocks"],
				GroupingKey: out["slack.groupingKey"], NotifyBroadcast: s.NotifyBroadcast, DeliveryPolicy: s.DeliveryPolicy}
		}
		if g := t.GitHub; g != nil {
			gh := &GitHubTemplate{RepoURLPath: out["github.repoURLPath"], RevisionPath: out["github.revisionPath"]}
			if g.RepoURLPath == "" {
				gh.RepoURLPath, _ = execute("{{.app.spec.source.repoURL}}", vars)
			}
			if g.RevisionPath == "" {
				gh.RevisionPath, _ = execute("{{.app.status.operationState.syncResult.revision}}", vars)
			}
			if g.Status != nil {
				gh.Status = &GitHubStatus{State: out["github.status.state"], Label: out["github.status.label"], TargetURL: out["github.status.targetURL"]}
			}
			n.GitHub = gh
		}
	}
	return n, nil
}

func execute(src string, vars map[string]any) (string, error) {
	if src == "" {
		return "", nil
	}
	t, err := parseText(src)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, vars); err != nil {
		return "", err
	}
	return strings.ReplaceAll(b.String(), "<no value>", ""), nil
}

// helpers are the functions Argo CD gives conditions (and templates, as
// .time, .strings and .repo): time.Now, time.Parse, strings.*, repo.*.
func helpers(now func() time.Time) map[string]any {
	return map[string]any{
		"time": map[string]any{
			"Now":   now,
			"Parse": func(s string) time.Time { t, _ := time.Parse(time.RFC3339, s); return t },
		},
		"strings": map[string]any{
			"ReplaceAll": strings.ReplaceAll, "ToUpper": strings.ToUpper, "ToLower": strings.ToLower,
		},
		"repo": map[string]any{
			"RepoURLToHTTPS":    repoURLToHTTPS,
			"FullNameByRepoURL": fullNameByRepoURL,
		},
	}
}
