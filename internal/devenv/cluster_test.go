package devenv_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// TestTemporalCluster starts a stack on a Temporal cluster (no regions):
// every service is its own process, the namespace has Ferry's search
// attributes on PostgreSQL visibility, the Web UI reads the frontend, a
// workflow survives a restart of the whole cluster, Stop leaves nothing, and
// a second start on the same state dir works.
func TestTemporalCluster(t *testing.T) {
	stateDir := filepath.Join(t.TempDir(), "state")
	opts := devenv.Options{Regions: []string{}, ToolsBin: stack.ToolsBin, StateDir: stateDir, Temporal: devenv.TemporalCluster, Log: testLog{t}}
	ctx := timeout(t, 8*time.Minute)
	s, err := devenv.Start(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	t.Logf("cluster stack ready in %s", s.StartDuration)

	pids := s.Pids()
	for _, name := range []string{"postgres", "temporal-frontend", "temporal-history", "temporal-matching", "temporal-worker", "temporal-ui", "redis", "registry", "dex", "mailpit"} {
		require.Contains(t, pids, name)
	}
	require.Len(t, pids, 10, "%v", pids)
	require.Len(t, devenv.Alive(pids), len(pids), "every process runs")

	c, err := client.Dial(client.Options{HostPort: s.TemporalAddress, Namespace: s.Namespace})
	require.NoError(t, err)
	defer c.Close()
	info, err := c.WorkflowService().GetClusterInfo(ctx, &workflowservice.GetClusterInfoRequest{})
	require.NoError(t, err)
	require.GreaterOrEqual(t, info.HistoryShardCount, int32(4))
	require.Equal(t, "postgres12", info.PersistenceStore)
	require.Equal(t, "postgres12", info.VisibilityStore)

	sa, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.Namespace})
	require.NoError(t, err)
	for name, typ := range devenv.SearchAttributes {
		want, err := enumspb.IndexedValueTypeFromString(typ)
		require.NoError(t, err)
		require.Equal(t, want, sa.CustomAttributes[name], "search attribute %s", name)
	}

	// No worker polls the queue: the workflow stays Running, in PostgreSQL.
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "cluster-probe",
		TaskQueue: "cluster-probe",
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword("FerryApp").ValueSet("cluster-probe"),
			temporal.NewSearchAttributeKeyKeywordList("FerryRegions").ValueSet([]string{"us-east-1", "eu-west-1"}),
		),
	}, "Probe", "payload")
	require.NoError(t, err)
	listed := func(c client.Client) func() bool {
		return func() bool {
			resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
				Namespace: s.Namespace, Query: "FerryApp = 'cluster-probe' AND FerryRegions = 'eu-west-1'",
			})
			return err == nil && len(resp.Executions) == 1 && resp.Executions[0].Execution.RunId == run.GetRunID()
		}
	}
	require.Eventually(t, listed(c), time.Minute, 100*time.Millisecond, "the workflow is found by its search attributes")

	resp, err := http.Get(s.TemporalUIURL + "/api/v1/namespaces/" + s.Namespace)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the Web UI reads the namespace from the frontend: %s", body)
	var ns struct {
		NamespaceInfo struct{ Name string } `json:"namespaceInfo"`
	}
	require.NoError(t, json.Unmarshal(body, &ns), "%s", body)
	require.Equal(t, s.Namespace, ns.NamespaceInfo.Name)

	require.NoError(t, s.RestartTemporal(ctx))
	c2, err := client.Dial(client.Options{HostPort: s.TemporalAddress, Namespace: s.Namespace})
	require.NoError(t, err)
	defer c2.Close()
	desc, err := c2.DescribeWorkflowExecution(ctx, run.GetID(), "")
	require.NoError(t, err)
	require.Equal(t, run.GetRunID(), desc.WorkflowExecutionInfo.Execution.RunId)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.WorkflowExecutionInfo.Status)
	require.Eventually(t, listed(c2), time.Minute, 100*time.Millisecond, "visibility survives the restart")
	c.Close()
	c2.Close()

	pids = s.Pids()
	require.NoError(t, s.Stop())
	require.Empty(t, devenv.Alive(pids))
	require.Empty(t, processesMentioning(t, stateDir))

	s2, err := devenv.Start(ctx, opts)
	require.NoError(t, err, "a second start on the same state dir")
	t.Logf("second cluster stack ready in %s", s2.StartDuration)
	pids = s2.Pids()
	c3, err := client.Dial(client.Options{HostPort: s2.TemporalAddress, Namespace: s2.Namespace})
	require.NoError(t, err)
	_, err = c3.DescribeWorkflowExecution(ctx, run.GetID(), "")
	require.Error(t, err, "the state dir is wiped on start, as with the dev server")
	c3.Close()
	require.NoError(t, s2.Stop())
	require.Empty(t, devenv.Alive(pids))
	require.Empty(t, processesMentioning(t, stateDir))
}

// testLog sends a stack's progress to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
