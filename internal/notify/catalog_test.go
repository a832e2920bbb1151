package notify

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Every trigger of Argo CD's catalog is built in, each sending a template
// of its name that is built in too.
func TestCatalogIsArgoCDs(t *testing.T) {
	triggers := builtinTriggers()
	var names []string
	for name, conds := range triggers {
		names = append(names, name)
		require.Len(t, conds, 1)
		require.Equal(t, []string{"app-" + strings.TrimPrefix(name, "on-")}, conds[0].Send)
	}
	sort.Strings(names)
	require.Equal(t, []string{"on-created", "on-deleted", "on-deployed", "on-health-degraded", "on-sync-failed",
		"on-sync-running", "on-sync-status-unknown", "on-sync-succeeded"}, names)
	require.Len(t, builtinTemplates(), len(triggers))
}

// Every built-in template renders, for every service, over an app with one
// source and over one with several and conditions whose messages need
// quoting: a message, an email subject, and Slack's and Teams' JSON.
func TestCatalogTemplatesRender(t *testing.T) {
	c := configWith(t, map[string]string{"context": "argocdUrl: https://cd.example.com"})
	multi := func() json.RawMessage {
		a := app.Application{}
		a.Metadata.Name = "shop"
		a.Spec.Sources = []app.Source{{RepoURL: "https://git.example.com/a.git"}, {RepoURL: "https://git.example.com/b.git"}}
		finished := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		st := app.Status{Sync: app.SyncStatus{Status: app.SyncStatusOutOfSync, Revision: "def456"},
			Health:         app.HealthStatus{Status: app.HealthDegraded, Message: `Deployment "web" exceeded its progress deadline`},
			Conditions:     []app.Condition{{Type: "SyncError", Message: "quote \" backslash \\ and\nnewline"}},
			OperationState: &app.OperationState{ID: "1", Revision: "def456", Phase: app.OperationFailed, Message: "one or more objects failed", FinishedAt: &finished}}
		obj, err := AppObject(a, st)
		require.NoError(t, err)
		return obj
	}()
	for name := range builtinTemplates() {
		for _, obj := range []json.RawMessage{testApp(app.OperationFailed, app.HealthDegraded), multi} {
			for _, serviceType := range []string{TypeSlack, TypeTeams, TypeEmail} {
				vars := helpers(time.Now)
				m, err := decodeApp(obj)
				require.NoError(t, err)
				vars["app"], vars["context"], vars["serviceType"] = m, c.context, serviceType
				n, err := c.render([]string{name}, vars)
				require.NoError(t, err, name)
				require.NotEmpty(t, strings.TrimSpace(n.Message), name)
				require.NotContains(t, n.Message, "<no value>", name)
				require.NotEmpty(t, n.Email.Subject, name)
				require.Equal(t, serviceType == TypeSlack && catalog[name].emoji != "", strings.HasPrefix(n.Message, ":"), "%s for %s: %s", name, serviceType, n.Message)
				var attachments, facts, actions []map[string]any
				require.NoError(t, json.Unmarshal([]byte(n.Slack.Attachments), &attachments), "%s: %s", name, n.Slack.Attachments)
				require.NoError(t, json.Unmarshal([]byte(n.Teams.Facts), &facts), "%s: %s", name, n.Teams.Facts)
				require.NoError(t, json.Unmarshal([]byte(n.Teams.PotentialAction), &actions), "%s: %s", name, n.Teams.PotentialAction)
				require.Contains(t, actions[0]["targets"].([]any)[0].(map[string]any)["uri"], "https://cd.example.com/applications/")
				var repo string
				for _, f := range facts {
					if f["name"] == "Repository" {
						repo, _ = f["value"].(string)
					}
				}
				if m["metadata"].(map[string]any)["name"] == "shop" {
					require.Equal(t, "https://git.example.com/a.git, https://git.example.com/b.git", repo, name)
					require.Equal(t, map[string]any{"name": "SyncError", "value": "quote \" backslash \\ and\nnewline"}, facts[len(facts)-1], name)
				} else {
					require.Equal(t, "https://github.com/acme/web.git", repo, name)
				}
			}
		}
	}
}
