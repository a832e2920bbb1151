package notify

// The built-in triggers are the ones Argo CD's documentation names, with
// the conditions its catalog gives them; each sends the built-in template
// of the same name (app-sync-succeeded for on-sync-succeeded, …), which
// tells what happened in a line and sets a GitHub commit status. A
// ConfigMap's trigger or template of the same name replaces it.
func builtinTriggers() map[string][]Condition {
	const hasOp = "app.status.operationState != nil and "
	const perRevision = "app.status.operationState?.syncResult?.revision"
	return map[string][]Condition{
		"on-sync-succeeded": {{
			Description: "the app's sync operation succeeded",
			When:        hasOp + "app.status.operationState.phase in ['Succeeded']",
			OncePer:     perRevision, Send: []string{"app-sync-succeeded"},
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
		"on-health-degraded": {{
			Description: "the app's health became Degraded",
			When:        "app.status.health.status == 'Degraded'",
			Send:        []string{"app-health-degraded"},
		}},
		"on-deployed": {{
			Description: "the app synced a new revision and is Healthy",
			When:        hasOp + "app.status.operationState.phase in ['Succeeded'] and app.status.health.status == 'Healthy'",
			OncePer:     "app.status.sync.revision", Send: []string{"app-deployed"},
		}},
	}
}

func builtinTemplates() map[string]*Template {
	status := func(state string) *GitHubTemplate {
		return &GitHubTemplate{Status: &GitHubStatus{State: state, Label: "continuous-delivery/{{.app.metadata.name}}"}}
	}
	const op = "{{with .app.status.operationState}} ({{.message}}){{end}}"
	const rev = "{{with .app.status.operationState}}{{.syncResult.revision}}{{end}}"
	t := func(name, title, message string, gh *GitHubTemplate) *Template {
		return &Template{name: name, Title: title, Message: message, GitHub: gh}
	}
	return map[string]*Template{
		"app-sync-succeeded": t("app-sync-succeeded", "Synced {{.app.metadata.name}}",
			"Application {{.app.metadata.name}} synced revision "+rev+"; it is {{.app.status.sync.status}} and {{.app.status.health.status}}.", status("success")),
		"app-sync-failed": t("app-sync-failed", "Failed to sync {{.app.metadata.name}}",
			"The sync of application {{.app.metadata.name}} to revision "+rev+" failed"+op+".", status("error")),
		"app-sync-running": t("app-sync-running", "Syncing {{.app.metadata.name}}",
			"Application {{.app.metadata.name}} is syncing revision "+rev+".", status("pending")),
		"app-health-degraded": t("app-health-degraded", "{{.app.metadata.name}} is Degraded",
			"Application {{.app.metadata.name}} is Degraded{{with .app.status.health.message}}: {{.}}{{end}}.", status("failure")),
		"app-deployed": t("app-deployed", "Deployed {{.app.metadata.name}}",
			"Application {{.app.metadata.name}} runs revision {{.app.status.sync.revision}}, Synced and Healthy.", status("success")),
	}
}
