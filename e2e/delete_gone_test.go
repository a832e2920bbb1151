package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/require"
)

// TestADeletedAppIsGone: once ferry app delete has finished, the app does
// not exist, as Argo CD's e2e tests expect (Expect(DoesNotExist()): the
// API's get answers NotFound, applications.argoproj.io "NAME" not found).
// ferry app get, with -o json too, history and sync fail naming the app;
// the status query through the Temporal client and the temporal CLI
// answers the same, not the closed workflow's last status. An app created
// again under the name starts afresh and works as any other.
func TestADeletedAppIsGone(t *testing.T) {
	startWorker(t)
	const name = "gone"
	repo := newRepo(t, name)
	repo.write(map[string]string{"app/cm.yaml": configMap("gone", "v1")})
	sha := repo.commitAndPush("one ConfigMap")
	file := writeFile(t, appYAML(name, repo.URL, "app", name, true, "3m"))
	mustFerry(t, "app", "apply", "-f", file)
	waitApp(t, name, sha, 2*time.Minute)
	require.Contains(t, mustFerry(t, "app", "history", name), sha)

	require.Contains(t, mustFerry(t, "app", "delete", name, "--cascade"), `application "gone" deleted`)
	notFound := `app "gone" not found`
	for _, args := range [][]string{
		{"app", "get", name},
		{"app", "get", name, "-o", "json"},
		{"app", "history", name},
		{"app", "sync", name},
		{"app", "wait", name, "--timeout", "5s"},
	} {
		out, err := ferry(t, args...)
		require.Error(t, err, "ferry %s exits non-zero: %s", strings.Join(args, " "), out)
		require.Contains(t, out, notFound, "ferry %s", strings.Join(args, " "))
		require.NotContains(t, out, "Synced", "ferry %s shows no status", strings.Join(args, " "))
	}
	require.NotContains(t, listedApps(t), name)

	// The status query, as the Temporal client and CLI send it: the
	// workflow's own answer (its history replayed), not its last status.
	c := temporalClient(t)
	_, err := queryView(t, c, name)
	var gone *contract.AppNotFoundError
	require.True(t, errors.As(err, &gone), "ferryclient.Query: %v", err)
	_, err = c.QueryWorkflow(context.Background(), contract.WorkflowID(name), "", contract.QueryStatus)
	require.Error(t, err, "the closed workflow's status query")
	require.Contains(t, err.Error(), notFound)
	out, err := tryTemporalCLI("workflow", "query", "--workflow-id", contract.WorkflowID(name), "--type", contract.QueryStatus, "--output", "json")
	require.Error(t, err, out)
	// Its log line escapes the quotes around the name.
	require.Contains(t, out, `app \"gone\" not found`, out)

	// Created again: a new app, Synced, with a history of its own.
	mustFerry(t, "app", "apply", "-f", file)
	waitApp(t, name, sha, 2*time.Minute)
	out = mustFerry(t, "app", "get", name, "-o", "json")
	var v contract.View
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.Equal(t, sha, v.Status.Sync.Revision)
	require.Len(t, v.Status.History, 1, "the app created again starts its history afresh")
	require.Contains(t, listedApps(t), name)

	mustFerry(t, "app", "delete", name, "--cascade")
	recordHistories(t, name)
}
