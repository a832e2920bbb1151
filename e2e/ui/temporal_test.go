package ui

import (
	"context"
	"testing"
	"time"

	sdkpb "go.temporal.io/api/sdk/v1"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// workflowDetails is the markdown the Temporal Web UI shows as the app's
// workflow's current details: the answer of the SDK's built-in metadata
// query, which the Web UI asks.
func workflowDetails(t *testing.T, e *e2etest.Env, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := e.TemporalClient(t).QueryWorkflow(ctx, contract.WorkflowID(name), "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	return md.GetCurrentDetails()
}
