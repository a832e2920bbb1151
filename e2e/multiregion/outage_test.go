package multiregion

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestRegionAPIServerDown: eu-west-1's kube-apiserver is stopped (its
// worker runs on). A new commit syncs to the other two regions; eu-west-1
// shows Unreachable with the reason, in the status and in `ferry app get`.
// Once its API server is back, eu-west-1 converges to the new commit with
// nobody doing anything.
func TestRegionAPIServerDown(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	const name, down = "outage", "eu-west-1"
	repo := e.NewRepo(t, name)
	repo.Write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.CommitAndPush("v1")
	e.Apply(t, e2etest.App{Name: name, RepoURL: repo.URL, Path: "app", Namespace: name, Regions: regions, Automated: true, Poll: "5s"})
	e.WaitApp(t, name, sha1, 3*time.Minute)

	require.NoError(t, stack.StopAPIServer(down))
	stopped := true
	t.Cleanup(func() {
		if stopped {
			require.NoError(t, stack.StartAPIServer(context.Background(), down))
		}
	})
	repo.Write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha2 := repo.CommitAndPush("v2")

	c := e.TemporalClient(t)
	up := []string{"us-east-1", "ap-south-1"}
	e2etest.Eventually(t, 3*time.Minute, "us-east-1 and ap-south-1 synced to v2 while eu-west-1 is down", func() (bool, string) {
		v, err := e2etest.Query(c, name)
		if err != nil {
			return false, err.Error()
		}
		ok := true
		for _, r := range up {
			sum := v.Status.Regions[r]
			ok = ok && sum.Sync == app.SyncStatusSynced && sum.Health == app.HealthHealthy && sum.Revision == sha2
		}
		if ok {
			t.Logf("the other regions synced: %s", e2etest.Describe(&v.Status))
		}
		return ok, e2etest.Describe(&v.Status)
	})
	// Bounded: the compare, or else the sync's attempts, give up on it.
	e2etest.Eventually(t, 4*time.Minute, "eu-west-1 marked Unreachable", func() (bool, string) {
		v, err := e2etest.Query(c, name)
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Regions[down].Unreachable, e2etest.Describe(&v.Status)
	})
	for _, r := range up {
		cm, err := e.KubeClient(t, r).CoreV1().ConfigMaps(name).Get(context.Background(), "settings", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "v2", cm.Data["version"], "region %s", r)
	}

	// What a user sees: the region's row says Unreachable and why.
	var view contract.View
	require.NoError(t, json.Unmarshal([]byte(e.MustFerry(t, "app", "get", name, "-o", "json")), &view))
	sum := view.Status.Regions[down]
	require.True(t, sum.Unreachable, "status.regions[%s]: %+v", down, sum)
	require.Contains(t, sum.Message, "Unreachable", "the reason")
	require.Contains(t, sum.Message, "connection refused", "the reason")
	t.Logf("status.regions[%s]: %s/%s: %s", down, sum.Sync, sum.Health, sum.Message)
	table := e.MustFerry(t, "app", "get", name)
	row := rowOf(table, down)
	require.Contains(t, row, "Unreachable", "ferry app get:\n%s", table)
	for _, r := range up {
		require.Contains(t, rowOf(table, r), "Synced", "ferry app get:\n%s", table)
	}
	t.Logf("operation %s %s: %s", view.Status.OperationState.ID, view.Status.OperationState.Phase, view.Status.OperationState.Message)
	require.Contains(t, view.Status.OperationState.Message, down, "the operation names the region it could not sync")

	require.NoError(t, stack.StartAPIServer(context.Background(), down))
	stopped = false
	st := e.WaitApp(t, name, sha2, 3*time.Minute)
	require.False(t, st.Regions[down].Unreachable)
	cm, err := e.KubeClient(t, down).CoreV1().ConfigMaps(name).Get(context.Background(), "settings", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "v2", cm.Data["version"], "region %s caught up", down)
	require.NoError(t, stack.Check(), "every process of the stack runs")
	e.RecordHistories(t, contract.WorkflowID(name), name)
	e.MustFerry(t, "app", "delete", name, "--cascade")
}

// rowOf returns the first line of `ferry app get`'s output that starts with
// the region's name: its row in the regions table.
func rowOf(out, region string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, region+" ") {
			return line
		}
	}
	return ""
}
