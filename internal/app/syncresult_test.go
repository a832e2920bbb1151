package app

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestWithSyncResultNamesArgoCDCodes(t *testing.T) {
	key := func(kind, name string) ResourceKey { return ResourceKey{Kind: kind, Namespace: "shop", Name: name} }
	op := &OperationState{ID: "3", Revision: "abc", Phase: OperationFailed, Results: []ResourceResult{
		{ResourceKey: key("Namespace", "shop"), Region: "us", Action: "created"},
		{ResourceKey: key("ServiceAccount", "Bad_Name"), Region: "us", Action: "failed", Message: "apply: Invalid value"},
		{ResourceKey: key("ConfigMap", "old"), Region: "us", Action: "pruned"},
		{ResourceKey: key("ConfigMap", "kept"), Region: "us", Action: "skipped", Message: "no longer desired; kept (Prune=false)"},
		{ResourceKey: key("ConfigMap", "same"), Region: "us", Action: "skipped", Message: "in sync: not applied (ApplyOutOfSyncOnly)"},
		{ResourceKey: key("Job", "migrate"), Region: "us", Action: "created", HookType: "PreSync", HookPhase: "Failed"},
		{ResourceKey: key("Job", "smoke"), Region: "us", Action: "created", HookType: "Sync", HookPhase: "Succeeded"},
	}}
	got := op.WithSyncResult()
	require.Nil(t, op.SyncResult, "the operation itself is left alone")
	require.Equal(t, "abc", got.SyncResult.Revision)
	type row struct{ Name, Status, SyncPhase string }
	var rows []row
	for _, r := range got.SyncResult.Resources {
		rows = append(rows, row{r.Name, r.Status, r.SyncPhase})
	}
	want := []row{
		{"shop", "Synced", "Sync"}, {"Bad_Name", "SyncFailed", "Sync"}, {"old", "Pruned", "Sync"},
		{"kept", "PruneSkipped", "Sync"}, {"same", "Synced", "Sync"},
		// A hook that ran and failed was created: Synced, its hookPhase
		// Failed (Argo CD's TestPreSyncHookFailure).
		{"migrate", "Synced", "PreSync"}, {"smoke", "Synced", "Sync"},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Fatalf("syncResult.resources (-want +got):\n%s", d)
	}
	data, err := json.Marshal(got)
	require.NoError(t, err)
	var generic struct {
		Results    []map[string]any `json:"results"`
		SyncResult struct {
			Resources []map[string]any `json:"resources"`
		} `json:"syncResult"`
	}
	require.NoError(t, json.Unmarshal(data, &generic))
	require.Len(t, generic.Results, 7, "results stay readable")
	require.Equal(t, "ServiceAccount", generic.SyncResult.Resources[1]["kind"])
	require.Equal(t, "apply: Invalid value", generic.SyncResult.Resources[1]["message"])
	require.Nil(t, (*OperationState)(nil).WithSyncResult())
}

// The PostSync hooks are part of the operation: their results follow the
// sync's in syncResult.resources, as Argo CD lists them.
func TestWithSyncResultListsThePostSyncHooks(t *testing.T) {
	key := ResourceKey{Kind: "Job", Namespace: "shop", Name: "smoke"}
	op := &OperationState{Revision: "abc", Phase: OperationFailed,
		Results: []ResourceResult{{ResourceKey: ResourceKey{Kind: "Pod", Namespace: "shop", Name: "pod"}, Region: "us", Action: "created"}},
		PostSync: &HookRun{Phase: OperationFailed, Results: []ResourceResult{
			{ResourceKey: key, Region: "us", Action: "failed", HookType: "PostSync", HookPhase: "Failed"}}}}
	got := op.WithSyncResult().SyncResult.Resources
	require.Len(t, got, 2)
	require.Equal(t, "pod", got[0].Name)
	require.Equal(t, "smoke", got[1].Name)
	require.Equal(t, "PostSync", got[1].SyncPhase)
	require.Equal(t, "Synced", got[1].Status, "created, then failed: its hookPhase says so")
	require.Len(t, op.Results, 1, "the operation's own results are left alone")
}
