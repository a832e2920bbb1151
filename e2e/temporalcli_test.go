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

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// temporalCLI runs the temporal CLI of the stack against its server.
func temporalCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := tryTemporalCLI(args...)
	require.NoError(t, err, "temporal %s: %s", strings.Join(args, " "), out)
	return out
}

// tryTemporalCLI runs the temporal CLI and returns its output and error.
func tryTemporalCLI(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(stack.ToolsBin, "temporal"), append(args, "--address", stack.TemporalAddress)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// appJSON is the app file as the JSON a temporal CLI user sends, with a
// field added under spec.source when extra is set: a typo the JSON
// converter alone would drop.
func appJSON(t *testing.T, yaml string, extra map[string]any) string {
	t.Helper()
	a, err := app.Parse([]byte(yaml))
	require.NoError(t, err)
	data, err := json.Marshal(a)
	require.NoError(t, err)
	if extra != nil {
		var obj map[string]any
		require.NoError(t, json.Unmarshal(data, &obj))
		src := obj["spec"].(map[string]any)["source"].(map[string]any)
		for k, v := range extra {
			src[k] = v
		}
		data, err = json.Marshal(obj)
		require.NoError(t, err)
	}
	file := filepath.Join(t.TempDir(), "app.json")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	return file
}

// TestTemporalCLI drives an app with the temporal CLI alone, as docs/concepts/temporal.md shows.
func TestTemporalCLI(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "cli")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.commitAndPush("v1")

	// The Application as JSON, as a user would convert their YAML.
	file := appJSON(t, appYAML("cli", repo.URL, "app", "cli", false, "3m"), nil)

	id := contract.WorkflowID("cli")
	temporalCLI(t, "workflow", "start", "--type", "Application", "--task-queue", "ferry", "--workflow-id", id, "--input-file", file)

	status := func() app.Status {
		out := temporalCLI(t, "workflow", "query", "--workflow-id", id, "--type", "status", "--output", "json")
		var res struct {
			QueryResult []contract.View `json:"queryResult"`
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

// TestTemporalCLIRefusesUnknownFields: the temporal CLI path is as strict as
// ferry app apply. A start whose Application has a misspelt field fails,
// naming it, and runs nothing; a spec update with one is refused by its
// validator, naming it, and changes nothing.
func TestTemporalCLIRefusesUnknownFields(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "clistrict")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	yaml := appYAML("clistrict", repo.URL, "app", "clistrict", false, "3m")
	id := contract.WorkflowID("clistrict")

	bad := appJSON(t, yaml, map[string]any{"targetRevison": "v2", "repoUrl": repo.URL})
	out, err := tryTemporalCLI("workflow", "execute", "--type", "Application", "--task-queue", "ferry",
		"--workflow-id", id, "--input-file", bad)
	require.Error(t, err, "the start is refused: %s", out)
	for _, want := range []string{`application "clistrict"`, "spec.source.targetRevison", `did you mean "targetRevision"`, "spec.source.repoUrl", `did you mean "repoURL"`} {
		require.Contains(t, out, want)
	}
	desc := temporalCLI(t, "workflow", "describe", "--workflow-id", id, "--output", "json")
	require.Contains(t, desc, "WORKFLOW_EXECUTION_STATUS_FAILED", desc)
	require.Contains(t, desc, "InvalidApplication", desc)
	require.Contains(t, desc, "spec.source.targetRevison", desc)
	history := temporalCLI(t, "workflow", "show", "--workflow-id", id, "--output", "json")
	require.NotContains(t, history, "ActivityTaskScheduled", "a refused app runs nothing")
	require.NotContains(t, history, "MarkerRecorded", "a refused app runs nothing, not even a local activity")

	// The same app without the typo runs; a spec update with it is refused.
	temporalCLI(t, "workflow", "start", "--type", "Application", "--task-queue", "ferry",
		"--workflow-id", id, "--input-file", appJSON(t, yaml, nil))
	status := func() contract.View {
		out := temporalCLI(t, "workflow", "query", "--workflow-id", id, "--type", "status", "--output", "json")
		var res struct {
			QueryResult []contract.View `json:"queryResult"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &res), out)
		require.Len(t, res.QueryResult, 1, out)
		return res.QueryResult[0]
	}
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		s := status().Status
		return s.Sync.Status == app.SyncStatusOutOfSync && s.Sync.Revision == sha, string(s.Sync.Status)
	})
	out, err = tryTemporalCLI("workflow", "update", "execute", "--workflow-id", id, "--name", "spec",
		"--input-file", appJSON(t, strings.Replace(yaml, "path: app", "path: elsewhere", 1), map[string]any{"pathh": "x"}))
	require.Error(t, err, "the spec update is refused: %s", out)
	out = strings.ReplaceAll(out, `\"`, `"`) // the CLI logs the message quoted
	require.Contains(t, out, "spec.source.pathh")
	require.Contains(t, out, `did you mean "path"`)
	require.Equal(t, "app", status().Spec.Source.Path, "the refused spec changed nothing")

	temporalCLI(t, "workflow", "update", "execute", "--workflow-id", id, "--name", "delete", "--input", `{"cascade": true}`)
	recordHistories(t, "clistrict")
}
