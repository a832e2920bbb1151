package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// annotatedConfigMap is a ConfigMap with the compare and sync options given
// ("" for none).
func annotatedConfigMap(name, compare, sync string) string {
	s := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  annotations:\n"
	if compare != "" {
		s += "    argocd.argoproj.io/compare-options: " + compare + "\n"
	}
	if sync != "" {
		s += "    argocd.argoproj.io/sync-options: " + sync + "\n"
	}
	return s + "data: {greeting: hello}\n"
}

// TestCompareOptionIgnoreExtraneous follows Argo CD's test of the same
// name and its Compare Options and Sync Options pages: resources that Git
// no longer has show OutOfSync each; those with IgnoreExtraneous, alone or
// with Prune=false or Prune=confirm, leave the app Synced, and a sync
// without prune succeeds and leaves it Synced; one with Prune=false alone
// makes the app OutOfSync.
func TestCompareOptionIgnoreExtraneous(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "extraneous")
	repo.write(map[string]string{
		"app/keep.yaml":         configMap("keep", "v1"),
		"app/ignored.yaml":      annotatedConfigMap("ignored", "IgnoreExtraneous", ""),
		"app/kept-ignored.yaml": annotatedConfigMap("kept-ignored", "IgnoreExtraneous", "Prune=false"),
		"app/confirm.yaml":      annotatedConfigMap("confirm-ignored", "IgnoreExtraneous", "Prune=confirm"),
		"app/kept.yaml":         annotatedConfigMap("kept", "", "Prune=false"),
	})
	repo.commitAndPush("five ConfigMaps")
	appFile := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: extraneous}
spec:
  source: {repoURL: %s, targetRevision: main, path: app}
  destination: {name: us-east-1, namespace: extraneous}
  syncPolicy:
    syncOptions: [CreateNamespace=true]
`, repo.URL)
	mustFerry(t, "app", "apply", "-f", writeFile(t, appFile))
	mustFerry(t, "app", "sync", "extraneous", "--wait")
	require.Equal(t, app.OperationSucceeded, lastOp(t, "extraneous").Phase)

	repo.git("rm", "-q", "app/ignored.yaml", "app/kept-ignored.yaml", "app/confirm.yaml")
	sha := repo.commitAndPush("three ConfigMaps with IgnoreExtraneous leave Git")
	v := refreshedAt(t, "extraneous", sha)
	require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status, "IgnoreExtraneous resources do not count: %+v", v.Status.Resources)
	require.Equal(t, map[string]app.SyncStatusCode{"keep": "Synced", "kept": "Synced",
		"ignored": "OutOfSync", "kept-ignored": "OutOfSync", "confirm-ignored": "OutOfSync"}, syncByName(v.Status.Resources))
	for _, r := range v.Status.Resources {
		require.Equal(t, r.Status == app.SyncStatusOutOfSync, r.RequiresPruning, "%+v", r)
	}

	mustFerry(t, "app", "sync", "extraneous", "--wait")
	require.Equal(t, app.OperationSucceeded, lastOp(t, "extraneous").Phase)
	v, err := queryView(t, temporalClient(t), "extraneous")
	require.NoError(t, err)
	require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status, "a sync without prune leaves them, and the app Synced")

	repo.git("rm", "-q", "app/kept.yaml")
	sha = repo.commitAndPush("a ConfigMap with Prune=false alone leaves Git")
	v = refreshedAt(t, "extraneous", sha)
	require.Equal(t, app.SyncStatusOutOfSync, v.Status.Sync.Status, "Prune=false alone: the app is out of sync (Argo CD's Sync Options)")
	require.Equal(t, app.SyncStatusOutOfSync, syncByName(v.Status.Resources)["kept"])
	mustFerry(t, "app", "delete", "extraneous", "--cascade")
}

// refreshedAt refreshes the app and waits until it has compared sha.
func refreshedAt(t *testing.T, name, sha string) *contract.View {
	t.Helper()
	mustFerry(t, "app", "refresh", name)
	var v *contract.View
	eventually(t, time.Minute, "app "+name+" compared at "+short(sha), func() (bool, string) {
		var err error
		v, err = queryView(t, temporalClient(t), name)
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Revision == sha && v.Status.Regions["us-east-1"].Revision == sha, v.Status.Sync.Revision
	})
	return v
}

func syncByName(rows []app.ResourceStatus) map[string]app.SyncStatusCode {
	out := map[string]app.SyncStatusCode{}
	for _, r := range rows {
		out[r.Name] = r.Status
	}
	return out
}
