package workflows

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays the histories recorded from real runs
// (make record-histories): a change to the workflow that would break the
// workflows already running fails here.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no recorded histories: run make record-histories")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			wf := New(Config{})
			r.RegisterWorkflowWithOptions(wf.Application, workflow.RegisterOptions{Name: ApplicationWorkflow})
			r.RegisterWorkflowWithOptions(wf.PostSyncHooks, workflow.RegisterOptions{Name: PostSyncWorkflow})
			r.RegisterWorkflowWithOptions(wf.AppProject, workflow.RegisterOptions{Name: ProjectWorkflow})
			r.RegisterWorkflowWithOptions(wf.ApplicationSet, workflow.RegisterOptions{Name: AppSetWorkflow})
			r.RegisterWorkflowWithOptions(wf.Notification, workflow.RegisterOptions{Name: NotificationWorkflow})
			r.RegisterWorkflowWithOptions(wf.HandOverManifests, workflow.RegisterOptions{Name: HandOverWorkflow})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}

// TestRecordedHistoriesHoldNoManifestsOrSecrets: the e2e tests that record
// these histories sync a Secret and a ConfigMap carrying marker values
// (e2e/secrets_test.go); neither may appear in any history.
func TestRecordedHistoriesHoldNoManifestsOrSecrets(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "histories", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	const secret, body = "ferry-secret-value-7f3a9c", "ferry-manifest-body-5c1d2e"
	forbidden := []string{secret, base64.StdEncoding.EncodeToString([]byte(secret)), body}
	sawSecretsApp := false
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		sawSecretsApp = sawSecretsApp || strings.Contains(filepath.Base(f), "secrets-")
		for _, s := range forbidden {
			require.NotContains(t, string(data), s, f)
		}
	}
	require.True(t, sawSecretsApp, "the history of the app holding the Secret is among the recorded ones")
}
