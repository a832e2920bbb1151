package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestSelectiveSyncAppliesOnlyTheNamedResource: ferry app sync --resource
// :ConfigMap:NAMESPACE/one applies that ConfigMap alone in every region,
// as argocd app sync --resource does; the other stays OutOfSync and absent,
// and a selective sync writes no history entry.
func TestSelectiveSyncAppliesOnlyTheNamedResource(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	const name = "selective"
	repo := newRepo(t, name)
	repo.write(map[string]string{"app/one.yaml": configMap("one", "v1"), "app/two.yaml": configMap("two", "v1")})
	repo.commitAndPush("two ConfigMaps")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, false, "3m")))
	eventually(t, time.Minute, "first compare of "+name, func() (bool, string) {
		v, err := queryView(t, c, name)
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	// The namespace must exist for the one ConfigMap: CreateNamespace
	// applies it with the selected resource, as Argo CD does.
	out := mustFerry(t, "app", "sync", name, "--resource", ":ConfigMap:"+name+"/one", "--wait")
	op := lastOp(t, name)
	require.Equal(t, app.OperationSucceeded, op.Phase, out)
	for _, r := range regions {
		_, applied := resultOf(op, r, "ConfigMap", "one")
		require.True(t, applied, "the named ConfigMap's result in %s: %v", r, resultsOf(op))
		_, other := resultOf(op, r, "ConfigMap", "two")
		require.False(t, other, "the other ConfigMap is not synced in %s: %v", r, resultsOf(op))
	}
	exists := configMapsIn(t, name, "one", "two")
	for _, r := range regions {
		require.True(t, exists[r+"/one"], "%s: %v", r, exists)
		require.False(t, exists[r+"/two"], "%s: %v", r, exists)
	}
	v, err := queryView(t, c, name)
	require.NoError(t, err)
	states := map[string]app.SyncStatusCode{}
	for _, res := range v.Status.Resources {
		states[res.Region+" "+res.Kind+"/"+res.Name] = res.Status
	}
	for _, r := range regions {
		require.Equal(t, app.SyncStatusSynced, states[r+" ConfigMap/one"], "%v", states)
		require.Equal(t, app.SyncStatusOutOfSync, states[r+" ConfigMap/two"], "%v", states)
	}
	require.Equal(t, app.SyncStatusOutOfSync, v.Status.Sync.Status, "the app as a whole is not synced")
	require.Empty(t, v.Status.History, "a selective sync writes no history entry")
	_, err = ferry(t, "app", "sync", name, "--resource", "ConfigMap:one")
	require.Error(t, err, "a malformed --resource is refused")
	mustFerry(t, "app", "delete", name, "--cascade")
	recordHistories(t, name)
}
