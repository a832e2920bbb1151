package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/notify"
)

const smtpPassword = "ferry-smtp-password-8c2d"

// TestSyncFailureNotifiesByEmail: an app subscribes an address to
// on-sync-failed through an email service (Argo CD's service.email, its
// credentials $secrets) pointed at the stack's SMTP server, Mailpit. Its
// sync fails; the built-in template's email is in the mailbox, once, even
// after the app reconciles again with the failure standing. The password
// is in no history. The app subscribes the address to on-deleted too: its
// delete mails once more.
func TestSyncFailureNotifiesByEmail(t *testing.T) {
	require.NotEmpty(t, stack.SMTPAddr, "the stack has no SMTP server: run hack/tools.sh, which builds mailpit")
	host, port, err := net.SplitHostPort(stack.SMTPAddr)
	require.NoError(t, err)
	cfg := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-notifications-cm
data:
  service.email.mail: |
    host: %s
    port: %s
    from: $email-from
    username: ferry
    password: $email-password
`, host, port)
	env := []string{notify.EnvName("email-from") + "=Ferry <ferry@example.com>", notify.EnvName("email-password") + "=" + smtpPassword}
	startWorkerEnv(t, env, "--notifications-config", writeFile(t, cfg))

	const name = "notifymail"
	to := name + "-" + strings.ToLower(time.Now().Format("150405.000")) + "@example.com"
	repo := newRepo(t, name)
	repo.write(map[string]string{
		"app/pod.yaml": failingPod("fails", "0"),
		// A later wave: the sync waits for the failing pod, and fails.
		"app/cm.yaml": inWave(configMap("later", "v1"), "1"),
	})
	sha := repo.commitAndPush("a pod that fails")
	manifest := strings.Replace(appYAML(name, repo.URL, "app", name, false, "3m"), "metadata:\n",
		"metadata:\n  annotations:\n    notifications.argoproj.io/subscribe.on-sync-failed.mail: "+to+
			"\n    notifications.argoproj.io/subscribe.on-deleted.mail: "+to+"\n", 1)
	mustFerry(t, "app", "apply", "-f", writeFile(t, manifest))
	syncFails(t, name)

	eventually(t, 3*time.Minute, "the email reaches the mailbox", func() (bool, string) {
		mails, err := stack.Mailbox(t.Context(), to)
		if err != nil {
			return false, err.Error()
		}
		return len(mails) > 0, "none yet"
	})
	c := temporalClient(t)
	var id string
	for _, ev := range events(t, c, name) {
		if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil && a.WorkflowType.GetName() == contract.NotificationWorkflow {
			require.Empty(t, id, "one notification is started")
			id = a.WorkflowId
		}
	}
	require.NotEmpty(t, id)
	// The app reconciles again: the condition still holds, nothing new is sent.
	notifiedThenReconciled(t, c, id, name)

	mails, err := stack.Mailbox(t.Context(), to)
	require.NoError(t, err)
	require.Len(t, mails, 1, "the failed sync is mailed once")
	m := mails[0]
	require.Equal(t, "ferry@example.com", m.From)
	require.Equal(t, []string{to}, m.To)
	require.Equal(t, "Sync of "+name+" failed", m.Subject)
	require.Contains(t, m.Text, "The sync of application "+name+" to revision "+sha+" failed")

	histories := e2etest.WorkflowHistories(t, c, contract.WorkflowID(name))
	for run, data := range e2etest.WorkflowHistories(t, c, id) {
		histories["notification "+run] = data
	}
	for run, data := range histories {
		require.NotContains(t, string(data), smtpPassword, "history %s", run)
	}

	// Deleting the app is Argo CD's on-deleted: one more email.
	mustFerry(t, "app", "delete", name, "--cascade")
	eventually(t, 3*time.Minute, "the deletion's email reaches the mailbox", func() (bool, string) {
		mails, err := stack.Mailbox(t.Context(), to)
		if err != nil {
			return false, err.Error()
		}
		return len(mails) > 1, fmt.Sprintf("%d mails", len(mails))
	})
	mails, err = stack.Mailbox(t.Context(), to)
	require.NoError(t, err)
	require.Len(t, mails, 2)
	require.Equal(t, name+" is being deleted", mails[1].Subject)
	require.Contains(t, mails[1].Text, "Application "+name+" is being deleted.")
	recordHistories(t, name)
}
