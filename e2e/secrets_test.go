package e2e

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
)

// Markers that must never appear in a workflow history: the value of a
// Secret (plain and base64) and the body of a ConfigMap. The replay tests of
// workflows/ scan the recorded histories for the same strings.
const (
	secretMarker   = "ferry-secret-value-7f3a9c"
	manifestMarker = "ferry-manifest-body-5c1d2e"
)

func markedManifests() map[string]string {
	return map[string]string{
		"app/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: " + secretMarker + "\n",
		"app/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: body\ndata:\n  note: " + manifestMarker + "\n",
	}
}

// TestHistoriesHoldNoManifestsOrSecrets syncs an app holding a Secret, then
// scans the histories of every workflow on the server.
func TestHistoriesHoldNoManifestsOrSecrets(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "secrets")
	repo.write(markedManifests())
	sha := repo.commitAndPush("a secret")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("secrets", repo.URL, "app", "secrets", true, "3m")))
	waitApp(t, "secrets", sha, 2*time.Minute)
	mustFerry(t, "app", "sync", "secrets", "--wait")
	mustFerry(t, "app", "delete", "secrets", "--cascade")
	recordHistories(t, "secrets")

	c := temporalClient(t)
	forbidden := []string{secretMarker, base64.StdEncoding.EncodeToString([]byte(secretMarker)), manifestMarker}
	resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000})
	require.NoError(t, err)
	require.NotEmpty(t, resp.Executions)
	scanned := 0
	for _, e := range resp.Executions {
		name := strings.TrimPrefix(e.Execution.WorkflowId, "app/")
		for runID, h := range histories(t, c, name) {
			scanned++
			for _, f := range forbidden {
				require.NotContains(t, string(h), f, "history of %s run %s", e.Execution.WorkflowId, runID)
			}
		}
	}
	t.Logf("scanned %d histories", scanned)
}
