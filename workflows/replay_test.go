package workflows

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
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
			wf.Register(r)
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
