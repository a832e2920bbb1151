package e2e

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/require"
)

// TestDefaultSubscriptionsNotifyTheAppsTheySelect: the ConfigMap's
// subscriptions key subscribes the apps whose labels its selector matches,
// without any annotation on them. Two apps fail their sync; the one the
// selector matches is delivered exactly one notification, the other none
// (its workflow starts no Notification).
func TestDefaultSubscriptionsNotifyTheAppsTheySelect(t *testing.T) {
	hook := &receiver{delivered: map[string]int{}, bodies: map[string]string{}}
	hookSrv := httptest.NewServer(hook)
	defer hookSrv.Close()
	cfg := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-notifications-cm
data:
  service.webhook.receiver: |
    url: %s
  subscriptions: |
    - recipients: [receiver]
      triggers: [on-sync-failed]
      selector: team=web
`, hookSrv.URL)
	startWorker(t, "--notifications-config", writeFile(t, cfg))

	const selected, other = "notifysel", "notifyother"
	for _, tc := range []struct{ name, team string }{{selected, "web"}, {other, "db"}} {
		repo := newRepo(t, tc.name)
		repo.write(map[string]string{
			"app/pod.yaml": failingPod("fails", "0"),
			// A later wave: the sync waits for the failing pod, and fails.
			"app/cm.yaml": inWave(configMap("later", "v1"), "1"),
		})
		repo.commitAndPush("a pod that fails")
		manifest := strings.Replace(appYAML(tc.name, repo.URL, "app", tc.name, false, "3m"),
			"metadata:\n", "metadata:\n  labels: {team: "+tc.team+"}\n", 1)
		mustFerry(t, "app", "apply", "-f", writeFile(t, manifest))
		syncFails(t, tc.name)
	}

	var id string
	eventually(t, 3*time.Minute, "the selected app's notification is delivered", func() (bool, string) {
		_, delivered, _ := hook.state()
		for k := range delivered {
			id = k
		}
		return len(delivered) > 0, "none yet"
	})
	// Both apps reconcile again with the failure standing: nothing new.
	for _, name := range []string{selected, other} {
		refreshed(t, name)
	}
	_, delivered, bodies := hook.state()
	require.Equal(t, map[string]int{id: 1}, delivered, "exactly one delivery, for the selected app")
	require.True(t, strings.HasPrefix(id, contract.WorkflowID(selected)+"/notify/"), id)
	require.Contains(t, bodies[id], "The sync of application "+selected+" to revision")

	c := temporalClient(t)
	for _, ev := range events(t, c, other) {
		if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
			require.NotEqual(t, contract.NotificationWorkflow, a.WorkflowType.GetName(),
				"the app the selector leaves out starts no notification (%s)", a.WorkflowId)
		}
	}
	for _, name := range []string{selected, other} {
		mustFerry(t, "app", "delete", name, "--cascade")
		recordHistories(t, name)
	}
}
