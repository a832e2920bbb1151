package notify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// Template is a template.<name> of the ConfigMap: Go templates over the
// app (.app), the ConfigMap's context (.context), the service type
// (.serviceType) and the recipient (.recipient). Every string in it is a
// template, in each service's part too.
type Template struct {
	name string
	Notification
}

// Notification is a message and each service's part of it: what a
// template holds, and what the templates a trigger sends render to.
type Notification struct {
	Message     string                     `json:"message,omitempty"`
	Title       string                     `json:"title,omitempty"`
	Webhook     map[string]WebhookTemplate `json:"webhook,omitempty"`
	Slack       *SlackTemplate             `json:"slack,omitempty"`
	GitHub      *GitHubTemplate            `json:"github,omitempty"`
	Email       *EmailTemplate             `json:"email,omitempty"`
	Teams       *TeamsTemplate             `json:"teams,omitempty"`
	Opsgenie    *OpsgenieTemplate          `json:"opsgenie,omitempty"`
	PagerDutyV2 *PagerDutyV2Template       `json:"pagerdutyv2,omitempty"`
	PagerDuty   *PagerDutyTemplate         `json:"pagerduty,omitempty"`
	GoogleChat  *GoogleChatTemplate        `json:"googlechat,omitempty"`
	Mattermost  *MattermostTemplate        `json:"mattermost,omitempty"`
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
// (Argo CD's catalog and users' files have them): read past, never sent.
var otherServiceParts = map[string]bool{
	"teams-workflows": true, "alertmanager": true, "rocketchat": true, "webex": true,
	"newrelic": true, "grafana": true, "gitlab": true, "awssqs": true, "pushover": true, "matrix": true, "datadog": true,
}

const templateKeys = "{message, title, webhook, slack, github, email, teams, opsgenie, pagerduty, pagerdutyv2, googlechat, mattermost}"

func parseTemplate(name, value string) (*Template, error) {
	var raw map[string]json.RawMessage
	if err := yaml.Unmarshal([]byte(value), &raw); err != nil {
		return nil, fmt.Errorf("not a template %s: %w", templateKeys, err)
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
		return nil, fmt.Errorf("not a template %s: %w", templateKeys, err)
	}
	if t.GitHub != nil && t.GitHub.Status != nil {
		if s := t.GitHub.Status.State; s != "" && !strings.Contains(s, "{{") && !validGitHubState[s] {
			return nil, fmt.Errorf("github.status.state %q: GitHub takes error, failure, pending or success", s)
		}
	}
	// Every field must parse now, not when a notification is due.
	var errs []string
	tree, err := t.tree()
	if err != nil {
		return nil, err
	}
	mapStrings(tree, "", func(field, src string) string {
		if _, err := parseText(src); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", field, err))
		}
		return src
	})
	if len(errs) > 0 {
		slices.Sort(errs)
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return t, nil
}

var validGitHubState = map[string]bool{"error": true, "failure": true, "pending": true, "success": true}

// tree is the template's Notification as decoded JSON, for walking its strings.
func (t *Template) tree() (any, error) {
	raw, err := json.Marshal(t.Notification)
	if err != nil {
		return nil, fmt.Errorf("template %q: %w", t.name, err)
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("template %q: %w", t.name, err)
	}
	return tree, nil
}

// mapStrings is tree (decoded JSON) with f applied to every string, given
// its path (a.b.0.c); map keys are left as they are.
func mapStrings(tree any, path string, f func(path, s string) string) any {
	at := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch v := tree.(type) {
	case string:
		return f(path, v)
	case map[string]any:
		for _, k := range sortedKeys(v) {
			v[k] = mapStrings(v[k], at(k), f)
		}
	case []any:
		for i, e := range v {
			v[i] = mapStrings(e, at(strconv.Itoa(i)), f)
		}
	}
	return tree
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

// render runs the named templates over vars, later ones adding to (and
// replacing the parts of) earlier ones, as Argo CD merges them.
func (c *Config) render(names []string, vars map[string]any) (Notification, error) {
	var n Notification
	for _, name := range names {
		t := c.templates[name]
		if t == nil {
			return n, fmt.Errorf("template %q is not configured", name)
		}
		tree, err := t.tree()
		if err != nil {
			return n, err
		}
		var errs []string
		tree = mapStrings(tree, "", func(field, src string) string {
			s, err := execute(src, vars)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", field, err))
			}
			return s
		})
		if len(errs) > 0 {
			return n, fmt.Errorf("template %q: %s", name, strings.Join(errs, "; "))
		}
		var out Notification
		raw, _ := json.Marshal(tree)
		if err := json.Unmarshal(raw, &out); err != nil {
			return n, fmt.Errorf("template %q: %w", name, err)
		}
		n.merge(out, t, vars)
	}
	return n, nil
}

// merge takes what template t (rendered: out) sets: its message and title
// when it has them, each service's part it has, its webhooks by name.
func (n *Notification) merge(out Notification, t *Template, vars map[string]any) {
	if t.Message != "" {
		n.Message = out.Message
	}
	if t.Title != "" {
		n.Title = out.Title
	}
	for wh, w := range out.Webhook {
		if n.Webhook == nil {
			n.Webhook = map[string]WebhookTemplate{}
		}
		n.Webhook[wh] = w
	}
	if g := out.GitHub; g != nil {
		if t.GitHub.RepoURLPath == "" {
			g.RepoURLPath, _ = execute("{{.app.spec.source.repoURL}}", vars)
		}
		if t.GitHub.RevisionPath == "" {
			g.RevisionPath, _ = execute("{{.app.status.operationState.syncResult.revision}}", vars)
		}
	}
	replace(&n.Slack, out.Slack)
	replace(&n.GitHub, out.GitHub)
	replace(&n.Email, out.Email)
	replace(&n.Teams, out.Teams)
	replace(&n.Opsgenie, out.Opsgenie)
	replace(&n.PagerDutyV2, out.PagerDutyV2)
	replace(&n.PagerDuty, out.PagerDuty)
	replace(&n.GoogleChat, out.GoogleChat)
	replace(&n.Mattermost, out.Mattermost)
}

func replace[T any](dst **T, src *T) {
	if src != nil {
		*dst = src
	}
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
