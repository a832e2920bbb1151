package e2e

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestApplyOutOfSyncOnlyListsWhatWasSynced: with ApplyOutOfSyncOnly=true
// in syncOptions, a sync applies what is OutOfSync and its results
// (status.operationState.syncResult.resources, as ferry app get -o json
// shows them) list only that and what it pruned: the resources already in
// sync are not in them, as in Argo CD's TestSyncWithApplyOutOfSyncOnly
// ("Only one resource should be in sync result"), where gitops-engine
// drops in-sync tasks before they run.
func TestApplyOutOfSyncOnlyListsWhatWasSynced(t *testing.T) {
	startWorker(t)
	const name = "outofsynconly"
	repo := newRepo(t, name)
	repo.write(map[string]string{
		"app/changes.yaml": configMap("changes", "v1"), "app/stays.yaml": configMap("stays", "v1"), "app/goes.yaml": configMap("goes", "v1"),
	})
	repo.commitAndPush("three ConfigMaps")
	spec := strings.Replace(appYAML(name, repo.URL, "app", name, false, "3m"),
		"syncOptions: [CreateNamespace=true]", "syncOptions: [CreateNamespace=true, ApplyOutOfSyncOnly=true]", 1)
	mustFerry(t, "app", "apply", "-f", writeFile(t, spec))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare of "+name, func() (bool, string) {
		v, err := queryView(t, c, name)
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	mustFerry(t, "app", "sync", name, "--wait")
	require.Subset(t, syncResultsOf(t, name), everyRegion("ConfigMap/changes Synced", "ConfigMap/goes Synced", "ConfigMap/stays Synced"),
		"the first sync applies everything: nothing was in sync")

	repo.write(map[string]string{"app/changes.yaml": configMap("changes", "v2")})
	repo.git("rm", "-q", "app/goes.yaml")
	repo.commitAndPush("one ConfigMap changes, one goes")
	mustFerry(t, "app", "refresh", name)
	eventually(t, time.Minute, "the commit compared", func() (bool, string) {
		v, err := queryView(t, c, name)
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	mustFerry(t, "app", "sync", name, "--prune", "--wait")
	require.Equal(t, app.OperationSucceeded, lastOp(t, name).Phase)
	require.ElementsMatch(t, syncResultsOf(t, name), everyRegion("ConfigMap/changes Synced", "ConfigMap/goes Pruned"),
		"ConfigMap/stays was in sync: it is not in the results")
	exists := configMapsIn(t, name, "changes", "stays", "goes")
	for _, r := range regions {
		require.True(t, exists[r+"/stays"], "the ConfigMap in sync is still there in %s: %v", r, exists)
		require.False(t, exists[r+"/goes"], "%s: %v", r, exists)
	}
	mustFerry(t, "app", "delete", name, "--cascade")
	recordHistories(t, name)
}

// syncResultsOf lists the last operation's syncResult.resources, as
// ferry app get -o json shows them, as "region Kind/name status".
func syncResultsOf(t *testing.T, name string) []string {
	t.Helper()
	out := mustFerry(t, "app", "get", name, "-o", "json")
	var v contract.View
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	op := v.Status.OperationState
	require.NotNil(t, op, "an operation ran")
	require.NotNil(t, op.SyncResult, "the operation has its syncResult")
	var got []string
	for _, r := range op.SyncResult.Resources {
		got = append(got, fmt.Sprintf("%s %s/%s %s", r.Region, r.Kind, r.Name, r.Status))
	}
	sort.Strings(got)
	return got
}

// everyRegion is each of entries in every test region, prefixed with it.
func everyRegion(entries ...string) []string {
	var out []string
	for _, r := range regions {
		for _, e := range entries {
			out = append(out, r+" "+e)
		}
	}
	return out
}
