package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// A sync that fails for a reason of its own is not a region outage: every
// region answered, so none is shown Unreachable, none reads Unknown, and
// the app shows what it showed before the sync (nothing was applied).
// Argo CD reports such a failure in operationState alone: its CLI refuses
// a --resource that names nothing in the app ("No matching app resources
// found for resource filter"), and a sync the project refuses fails its
// operation; the app's sync and health stay those of its last compare.

// requireAnswered requires that, right after an operation and with no
// refresh, every region of the app shows sync and health as it answered,
// and that no RegionUnreachable condition is set.
func requireAnswered(t *testing.T, name string, sync app.SyncStatusCode, health app.HealthStatusCode) {
	t.Helper()
	v, err := queryView(t, temporalClient(t), name)
	require.NoError(t, err)
	st := v.Status
	for _, c := range st.Conditions {
		require.NotEqual(t, "RegionUnreachable", c.Type, "every region answered: %+v", st.Conditions)
	}
	for _, r := range regions {
		sum := st.Regions[r]
		require.False(t, sum.Unreachable, "%s answered: %+v", r, sum)
		require.Equal(t, sync, sum.Sync, "%s: %+v", r, sum)
		require.Equal(t, health, sum.Health, "%s: %+v", r, sum)
	}
	require.Equal(t, sync, st.Sync.Status, "the app's sync")
	require.Equal(t, health, st.Health.Status, "the app's health")
	require.Len(t, st.Resources, 2*len(regions), "every region's resources are still shown: %+v", st.Resources)
}

// TestASelectionThatMatchesNothingIsNoOutage: after a full sync, a
// selective sync naming a ConfigMap the app does not have fails its
// operation with why, and leaves every region Synced and Healthy; a
// selective sync right after reaches every region.
func TestASelectionThatMatchesNothingIsNoOutage(t *testing.T) {
	startWorker(t)
	const name = "selnothing"
	repo := newRepo(t, name)
	repo.write(map[string]string{"app/one.yaml": configMap("one", "v1"), "app/two.yaml": configMap("two", "v1")})
	repo.commitAndPush("two ConfigMaps")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare of "+name, func() (bool, string) {
		v, err := queryView(t, c, name)
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	mustFerry(t, "app", "sync", name, "--wait")
	requireAnswered(t, name, app.SyncStatusSynced, app.HealthHealthy)

	out, err := ferry(t, "app", "sync", name, "--resource", ":ConfigMap:"+name+"/absent", "--wait")
	require.Error(t, err, "a selection that matches nothing fails: %s", out)
	op := lastOp(t, name)
	require.Equal(t, app.OperationFailed, op.Phase, op.Message)
	require.Contains(t, op.Message, "matches :ConfigMap:"+name+"/absent")
	requireAnswered(t, name, app.SyncStatusSynced, app.HealthHealthy)

	out = mustFerry(t, "app", "sync", name, "--resource", ":ConfigMap:"+name+"/one", "--wait")
	op = lastOp(t, name)
	require.Equal(t, app.OperationSucceeded, op.Phase, out)
	require.NotContains(t, op.Message, "unreachable", "no region is skipped")
	for _, r := range regions {
		_, synced := resultOf(op, r, "ConfigMap", "one")
		require.True(t, synced, "the named ConfigMap is synced in %s: %v", r, resultsOf(op))
	}
	mustFerry(t, "app", "delete", name, "--cascade")
	recordHistories(t, name)
}

// TestASyncTheProjectRefusesIsNoOutage: the app's project allows no
// cluster-scoped kind, so its sync may not create the destination
// namespace (CreateNamespace=true): the operation fails naming the rule,
// and the app stays OutOfSync and Missing in every region, as it was.
func TestASyncTheProjectRefusesIsNoOutage(t *testing.T) {
	startWorker(t)
	const name = "projrefuses"
	repo := newRepo(t, name)
	repo.write(map[string]string{"app/one.yaml": configMap("one", "v1"), "app/two.yaml": configMap("two", "v1")})
	repo.commitAndPush("two ConfigMaps")
	project := fmt.Sprintf("apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: %s\n  namespace: argocd\nspec:\n  sourceRepos: [%s]\n  destinations:\n", name, repo.URL)
	for _, r := range regions {
		project += fmt.Sprintf("  - {name: %s, namespace: %s}\n", r, name)
	}
	mustFerry(t, "project", "apply", "-f", writeFile(t, project))
	spec := strings.Replace(appYAML(name, repo.URL, "app", name, false, "3m"), "spec:\n", "spec:\n  project: "+name+"\n", 1)
	mustFerry(t, "app", "apply", "-f", writeFile(t, spec))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare of "+name, func() (bool, string) {
		v, err := queryView(t, c, name)
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	requireAnswered(t, name, app.SyncStatusOutOfSync, app.HealthMissing)

	out, err := ferry(t, "app", "sync", name, "--wait")
	require.Error(t, err, "the project refuses the namespace: %s", out)
	op := lastOp(t, name)
	require.Equal(t, app.OperationFailed, op.Phase, op.Message)
	require.Contains(t, op.Message, "cluster-scoped kind Namespace is not allowed (clusterResourceWhitelist)")
	requireAnswered(t, name, app.SyncStatusOutOfSync, app.HealthMissing)

	mustFerry(t, "app", "delete", name, "--cascade")
	mustFerry(t, "project", "delete", name)
	recordHistories(t, name)
}
