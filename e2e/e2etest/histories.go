package e2etest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// RecordEnv turns recording on (make record-histories).
const RecordEnv = "FERRY_RECORD_HISTORIES"

// WorkflowHistories returns every run of the workflow with the ID, by run
// ID, JSON-encoded as `temporal workflow show --output json` writes them.
func WorkflowHistories(t testing.TB, c client.Client, workflowID string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowId = '" + workflowID + "'", NextPageToken: token,
		})
		require.NoError(t, err)
		for _, e := range resp.Executions {
			out[e.Execution.RunId] = history(t, c, workflowID, e.Execution.RunId)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return out
		}
	}
}

// Starts counts how many times the workflow with the ID was started: its
// executions, running or not, but for those that continued as new (a new
// app's first run does once it has synced), whose next run is the same
// start's.
func Starts(t testing.TB, c client.Client, workflowID string) int {
	t.Helper()
	resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
		Query: "WorkflowId = '" + workflowID + "'",
	})
	require.NoError(t, err)
	n := 0
	for _, ex := range resp.Executions {
		if ex.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			n++
		}
	}
	return n
}

func history(t testing.TB, c client.Client, workflowID, runID string) []byte {
	t.Helper()
	h := &historypb.History{}
	it := c.GetWorkflowHistory(context.Background(), workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	return data
}

// RecordHistories keeps every run of the workflow for the replay tests of
// workflows/ when RecordEnv is set, in files named NAME-COMMIT-RUN.json:
// the commit of the checkout that recorded them (what the workflow code
// was), and the last characters of the run ID (runs of one workflow).
func (e *Env) RecordHistories(t testing.TB, workflowID, name string) {
	t.Helper()
	if os.Getenv(RecordEnv) == "" {
		return
	}
	dir := historiesDir(t)
	commit := recordingCommit(t, dir)
	for runID, data := range WorkflowHistories(t, e.TemporalClient(t), workflowID) {
		file := filepath.Join(dir, name+"-"+commit+"-"+runID[len(runID)-4:]+".json")
		require.NoError(t, os.WriteFile(file, data, 0o644))
	}
}

// historiesDir is workflows/testdata/histories of this checkout.
func historiesDir(t testing.TB) string {
	_, self, _, ok := runtime.Caller(0)
	require.True(t, ok)
	dir := filepath.Join(filepath.Dir(self), "..", "..", "workflows", "testdata", "histories")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// recordingCommit is the short commit of the checkout, whose workflow code
// records the histories: that code must be committed, so that the name
// says which code wrote them.
func recordingCommit(t testing.TB, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--short=8", "HEAD").Output()
	require.NoError(t, err, "the commit that records the histories")
	status, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--", "../..", ":!../../testdata").Output()
	require.NoError(t, err)
	require.Empty(t, strings.TrimSpace(string(status)), "record histories from committed workflow code (commit workflows/ first): a history is named by the commit that recorded it")
	return strings.TrimSpace(string(out))
}
