package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/workflows"
)

// histories returns every run of the app's workflow, JSON-encoded as
// `temporal workflow show --output json` writes them.
func histories(t *testing.T, c client.Client, name string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowId = '" + workflows.WorkflowID(name) + "'", NextPageToken: token,
		})
		require.NoError(t, err)
		for _, e := range resp.Executions {
			h := &historypb.History{}
			it := c.GetWorkflowHistory(ctx, e.Execution.WorkflowId, e.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				require.NoError(t, err)
				h.Events = append(h.Events, ev)
			}
			data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
			require.NoError(t, err)
			out[e.Execution.RunId] = data
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return out
		}
	}
}

// recordHistories keeps the app's histories for the replay tests of
// workflows/ when FERRY_RECORD_HISTORIES is set (make record-histories).
func recordHistories(t *testing.T, name string) {
	if os.Getenv("FERRY_RECORD_HISTORIES") == "" {
		return
	}
	dir := filepath.Join("..", "workflows", "testdata", "histories")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for runID, data := range histories(t, temporalClient(t), name) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+"-"+runID[:8]+".json"), data, 0o644))
	}
}
