package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/workflows"
)

// temporalCLI runs the temporal CLI of the stack against its server.
func temporalCLI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(stack.ToolsBin, "temporal"), append(args, "--address", stack.TemporalAddress)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "temporal %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// TestTemporalCLI drives an app with the temporal CLI alone, as the README shows.
func TestTemporalCLI(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "cli")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.commitAndPush("v1")

	// The Application as JSON, as a user would convert their YAML.
	a, err := app.Parse([]byte(appYAML("cli", repo.URL, "app", "cli", false, "3m")))
	require.NoError(t, err)
	data, err := json.Marshal(a)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "app.json")
	require.NoError(t, os.WriteFile(file, data, 0o644))

	id := workflows.WorkflowID("cli")
	temporalCLI(t, "workflow", "start", "--type", "Application", "--task-queue", "ferry", "--workflow-id", id, "--input-file", file)

	status := func() app.Status {
		out := temporalCLI(t, "workflow", "query", "--workflow-id", id, "--type", "status", "--output", "json")
		var res struct {
			QueryResult []workflows.View `json:"queryResult"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &res), out)
		require.Len(t, res.QueryResult, 1, out)
		return res.QueryResult[0].Status
	}
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		s := status()
		return s.Sync.Status == app.SyncStatusOutOfSync && s.Sync.Revision == sha1, string(s.Sync.Status)
	})

	out := temporalCLI(t, "workflow", "update", "execute", "--workflow-id", id, "--name", "sync", "--input", `{"prune": true}`)
	require.Contains(t, out, "Succeeded", out)
	require.Equal(t, app.SyncStatusSynced, status().Sync.Status)

	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha2 := repo.commitAndPush("v2")
	temporalCLI(t, "workflow", "signal", "--workflow-id", id, "--name", "refresh", "--input", `{"hard": false}`)
	eventually(t, time.Minute, "refresh sees the new commit", func() (bool, string) {
		s := status()
		return s.Sync.Revision == sha2 && s.Sync.Status == app.SyncStatusOutOfSync, string(s.Sync.Status)
	})

	temporalCLI(t, "workflow", "update", "execute", "--workflow-id", id, "--name", "delete", "--input", `{"cascade": true}`)
}
