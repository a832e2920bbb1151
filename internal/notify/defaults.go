package notify

import (
	"fmt"
	"strings"
)

// The built-in triggers are those of Argo CD's catalog, with its
// conditions; each sends the built-in template of the same name less
// "on-" (app-sync-failed for on-sync-failed, …). A ConfigMap's trigger or
// template of the same name replaces it.
func builtinTriggers() map[string][]Condition {
	const hasOp = "app.status.operationState != nil and "
	const perRevision = "app.status.operationState?.syncResult?.revision"
	return map[string][]Condition{
		"on-created": {{
			Description: "the app was created",
			When:        "true",
			OncePer:     "app.metadata.name", Send: []string{"app-created"},
		}},
		"on-deleted": {{
			Description: "the app is being deleted",
			When:        "app.metadata.deletionTimestamp != nil",
			OncePer:     "app.metadata.name", Send: []string{"app-deleted"},
		}},
		"on-deployed": {{
			Description: "the app synced a new revision and is Healthy; once per revision",
			When:        hasOp + "app.status.operationState.phase in ['Succeeded'] and app.status.health.status == 'Healthy'",
			OncePer:     perRevision, Send: []string{"app-deployed"},
		}},
		"on-health-degraded": {{
			Description: "the app's health became Degraded",
			When:        "app.status.health.status == 'Degraded'",
			Send:        []string{"app-health-degraded"},
		}},
		"on-sync-failed": {{
			Description: "the app's sync operation failed",
			When:        hasOp + "app.status.operationState.phase in ['Error', 'Failed']",
			OncePer:     perRevision, Send: []string{"app-sync-failed"},
		}},
		"on-sync-running": {{
			Description: "the app's sync operation started",
			When:        hasOp + "app.status.operationState.phase in ['Running']",
			OncePer:     perRevision, Send: []string{"app-sync-running"},
		}},
		"on-sync-status-unknown": {{
			Description: "the app's sync status is Unknown",
			When:        "app.status.sync.status == 'Unknown'",
			Send:        []string{"app-sync-status-unknown"},
		}},
		"on-sync-succeeded": {{
			Description: "the app's sync operation succeeded",
			When:        hasOp + "app.status.operationState.phase in ['Succeeded']",
			OncePer:     perRevision, Send: []string{"app-sync-succeeded"},
		}},
	}
}

// catalogEntry is what one built-in template says; catalogYAML writes it
// as a template.<name> value for every service: a message, an email
// subject, Slack's attachment and Teams' card with the same facts, and a
// GitHub commit status.
type catalogEntry struct {
	subject, message string
	emoji            string // Slack's, before the message
	color            string // Slack's and Teams' colour, #rrggbb
	state            string // the GitHub commit status
	facts            [][2]string
	operation        bool // the link goes to the operation
}

// repoVar sets $repo to the app's repository URLs, of spec.source or of
// every spec.sources entry; fact values may read it.
const repoVar = `{{- $repo := "" }}{{ with .app.spec.source }}{{ $repo = .repoURL }}{{ end }}` +
	`{{ range .app.spec.sources }}{{ $repo = list $repo .repoURL | compact | join ", " }}{{ end -}}`

var catalog = map[string]catalogEntry{
	"app-created": {subject: "{{.app.metadata.name}} was created", message: "Application {{.app.metadata.name}} was created.",
		color: "#0dadea", facts: [][2]string{{"Repository", "$repo"}}},
	"app-deleted": {subject: "{{.app.metadata.name}} is being deleted", message: "Application {{.app.metadata.name}} is being deleted.",
		color: "#6b6b6b", facts: [][2]string{{"Repository", "$repo"}}},
	"app-deployed": {subject: "{{.app.metadata.name}} runs a new revision", emoji: ":white_check_mark:",
		message: "Application {{.app.metadata.name}} runs revision {{.app.status.sync.revision}}: Synced and Healthy.",
		color:   "#18be52", state: "success",
		facts: [][2]string{{"Sync status", ".app.status.sync.status"}, {"Repository", "$repo"}, {"Revision", ".app.status.sync.revision"}}},
	"app-health-degraded": {subject: "{{.app.metadata.name}} is Degraded", emoji: ":exclamation:",
		message: "Application {{.app.metadata.name}} is Degraded{{with .app.status.health.message}}: {{.}}{{end}}.",
		color:   "#f4c030", state: "failure",
		facts: [][2]string{{"Health", ".app.status.health.status"}, {"Repository", "$repo"}}},
	"app-sync-failed": {subject: "Sync of {{.app.metadata.name}} failed", emoji: ":exclamation:",
		message: "The sync of application {{.app.metadata.name}} to revision {{.app.status.operationState.syncResult.revision}} failed" +
			"{{with .app.status.operationState.finishedAt}} at {{.}}{{end}}{{with .app.status.operationState.message}}: {{.}}{{end}}.",
		color: "#e96d76", state: "error", operation: true,
		facts: [][2]string{{"Sync status", ".app.status.sync.status"}, {"Failed at", ".app.status.operationState.finishedAt"}, {"Repository", "$repo"}}},
	"app-sync-running": {subject: "Syncing {{.app.metadata.name}}",
		message: "Application {{.app.metadata.name}} is syncing revision {{.app.status.operationState.syncResult.revision}}" +
			"{{with .app.status.operationState.startedAt}}, since {{.}}{{end}}.",
		color: "#0dadea", state: "pending", operation: true,
		facts: [][2]string{{"Sync status", ".app.status.sync.status"}, {"Started at", ".app.status.operationState.startedAt"}, {"Repository", "$repo"}}},
	"app-sync-status-unknown": {subject: "The sync status of {{.app.metadata.name}} is Unknown", emoji: ":exclamation:",
		message: "Ferry cannot tell whether application {{.app.metadata.name}} is in sync." +
			"{{if ne .serviceType \"slack\"}}{{range .app.status.conditions}}\n- {{.message}}{{end}}{{end}}",
		color: "#e96d76",
		facts: [][2]string{{"Sync status", ".app.status.sync.status"}, {"Repository", "$repo"}}},
	"app-sync-succeeded": {subject: "{{.app.metadata.name}} synced", emoji: ":white_check_mark:",
		message: "Application {{.app.metadata.name}} synced revision {{.app.status.operationState.syncResult.revision}}" +
			"{{with .app.status.operationState.finishedAt}} at {{.}}{{end}}; it is {{.app.status.sync.status}} and {{.app.status.health.status}}.",
		color: "#18be52", state: "success", operation: true,
		facts: [][2]string{{"Sync status", ".app.status.sync.status"}, {"Synced at", ".app.status.operationState.finishedAt"}, {"Repository", "$repo"}}},
}

// catalogYAML is e's template.<name> value.
func catalogYAML(e catalogEntry) string {
	link := "{{$.context.argocdUrl}}/applications/{{$.app.metadata.name}}"
	if e.operation {
		link += "?operation=true"
	}
	// Each fact's value, and each condition, JSON-quoted by toJson.
	facts := func(nameKey, extra string) string {
		var b strings.Builder
		b.WriteString(repoVar + "[")
		for i, f := range e.facts {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, `{"%s": %q, "value": {{ toJson (default "" %s) }}%s}`, nameKey, f[0], f[1], extra)
		}
		fmt.Fprintf(&b, `{{ range .app.status.conditions }}, {"%s": {{ toJson .type }}, "value": {{ toJson .message }}%s}{{ end }}]`, nameKey, extra)
		return b.String()
	}
	slack := `[{"title": {{ toJson .app.metadata.name }},{{ with .context.argocdUrl }} "title_link": "` + link + `",{{ end }} "color": "` + e.color +
		`", "fields": ` + facts("title", `, "short": true`) + `}]`
	actions := `{{ if .context.argocdUrl }}[{"@type": "OpenUri", "name": "Open in Argo CD's UI", "targets": [{"os": "default", "uri": "` + link + `"}]}]{{ end }}`
	message := e.message
	if e.emoji != "" {
		message = `{{if eq .serviceType "slack"}}` + e.emoji + ` {{end}}` + message
	}
	var b strings.Builder
	field := func(path, value string) { fmt.Fprintf(&b, "%s: %s\n", path, quoteYAML(value)) }
	field("message", message)
	field("title", e.subject)
	b.WriteString("email:\n")
	field("  subject", e.subject)
	b.WriteString("slack:\n")
	field("  attachments", slack)
	b.WriteString("teams:\n")
	field("  title", e.subject)
	field("  themeColor", e.color)
	field("  facts", facts("name", ""))
	field("  potentialAction", actions)
	if e.state != "" {
		b.WriteString("github:\n  status:\n")
		field("    state", e.state)
		field("    label", "continuous-delivery/{{.app.metadata.name}}")
	}
	return b.String()
}

// quoteYAML is s as a YAML double-quoted scalar (JSON's quoting is YAML's).
func quoteYAML(s string) string { return fmt.Sprintf("%q", s) }

func builtinTemplates() map[string]*Template {
	out := make(map[string]*Template, len(catalog))
	for name, e := range catalog {
		t, err := parseTemplate(name, catalogYAML(e))
		if err != nil {
			panic(fmt.Sprintf("built-in template %s: %v", name, err)) // a test parses every one
		}
		out[name] = t
	}
	return out
}
