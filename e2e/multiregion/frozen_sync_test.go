package multiregion

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestRegionFrozenMidSync: one region's kube-apiserver is frozen (SIGSTOP)
// while that region's sync runs: its compare answered, wave 0 (a
// Deployment) is applied and waited for, wave 1 (a ConfigMap) is not yet.
// The wait is made to last by cordoning that region's fake Node, so the
// freeze lands mid-sync every time. What a user sees: the two other
// regions Synced at the commit, the operation ending with their results
// and the frozen region shown Unreachable (before the fix, the frozen
// region's request hung and its Sync was retried, holding the operation
// for minutes); a commit pushed while it is frozen is Synced in the two
// others; once thawed, the region catches up with nobody doing anything.
func TestRegionFrozenMidSync(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	const name = "frozensync"
	frozen, others := regions[1], []string{regions[0], regions[2]}
	repo := e.NewRepo(t, name)
	repo.Write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.CommitAndPush("v1")
	e.Apply(t, e2etest.App{Name: name, RepoURL: repo.URL, Path: "app", Namespace: name, Regions: regions, Automated: true, Poll: "1h"})
	e.WaitApp(t, name, sha1, 3*time.Minute)

	uncordon := cordonNode(t, e, frozen)
	repo.Write(map[string]string{"app/web.yaml": wavedDeployment(0), "app/cm.yaml": wavedConfigMap(1, "v2")})
	sha2 := repo.CommitAndPush("v2: a Deployment in wave 0 before the ConfigMap")
	e.MustFerry(t, "app", "refresh", name)

	var view contract.View
	get := func() string {
		require.NoError(t, json.Unmarshal([]byte(e.MustFerry(t, "app", "get", name, "-o", "json")), &view))
		return e2etest.Describe(&view.Status)
	}
	syncedAt := func(sha string) func() (bool, string) {
		return func() (bool, string) {
			state := get()
			ok := true
			for _, r := range others {
				sum := view.Status.Regions[r]
				ok = ok && sum.Sync == app.SyncStatusSynced && sum.SyncedRevision == sha
			}
			return ok, state
		}
	}
	e2etest.Eventually(t, 2*time.Minute, "the other regions Synced at v2, "+frozen+" waiting for its wave 0", func() (bool, string) {
		ok, state := syncedAt(sha2)()
		op := view.Status.OperationState
		ok = ok && op != nil && op.Revision == sha2 && op.Phase == app.OperationRunning
		_, err := e.KubeClient(t, frozen).AppsV1().Deployments(name).Get(context.Background(), "web", metav1.GetOptions{})
		return ok && err == nil, state
	})

	thaw := freeze(t, frozen)

	// The operation ends: the regions that answered keep their results and
	// stay Synced; the frozen one is Unreachable, saying why.
	e2etest.Eventually(t, 3*time.Minute, "the operation of v2 ended with "+frozen+" Unreachable", func() (bool, string) {
		state := get()
		op := view.Status.OperationState
		return op != nil && op.Revision == sha2 && op.Phase != app.OperationRunning && view.Status.Regions[frozen].Unreachable, state
	})
	op := view.Status.OperationState
	t.Logf("operation %s: %s", op.Phase, op.Message)
	require.Contains(t, op.Message, frozen+": Unreachable", "the operation names the region that stopped answering")
	sum := view.Status.Regions[frozen]
	require.Contains(t, sum.Message, "stopped answering during the sync", "status.regions[%s]", frozen)
	t.Logf("status.regions[%s]: %s/%s: %s", frozen, sum.Sync, sum.Health, sum.Message)
	synced := map[string]int{}
	for _, res := range op.SyncResult.Resources {
		synced[res.Region]++
	}
	for _, r := range others {
		require.Equal(t, 2, synced[r], "the results of %s (the Deployment and the ConfigMap) are recorded: %+v", r, op.SyncResult.Resources)
		require.Equal(t, app.SyncStatusSynced, view.Status.Regions[r].Sync, "region %s", r)
	}
	table := e.MustFerry(t, "app", "get", name)
	require.Contains(t, rowOf(table, frozen), "Unreachable", "ferry app get:\n%s", table)
	for _, r := range others {
		require.Contains(t, rowOf(table, r), "Synced", "ferry app get:\n%s", table)
	}

	// A commit while the region is frozen: the hung sync holds nothing back.
	repo.Write(map[string]string{"app/web.yaml": wavedDeployment(0), "app/cm.yaml": wavedConfigMap(1, "v3")})
	sha3 := repo.CommitAndPush("v3")
	e.MustFerry(t, "app", "refresh", name)
	e2etest.Eventually(t, 2*time.Minute, "the other regions Synced at v3 while "+frozen+" is frozen", syncedAt(sha3))
	require.True(t, view.Status.Regions[frozen].Unreachable, "%s is still shown Unreachable: %s", frozen, e2etest.Describe(&view.Status))
	for _, r := range others {
		cm, err := e.KubeClient(t, r).CoreV1().ConfigMaps(name).Get(context.Background(), "settings", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "v3", cm.Data["version"], "region %s", r)
	}

	// Thawed (and its Node schedulable again): the region catches up.
	thaw()
	uncordon()
	st := e.WaitApp(t, name, sha3, 3*time.Minute)
	require.False(t, st.Regions[frozen].Unreachable)
	cm, err := e.KubeClient(t, frozen).CoreV1().ConfigMaps(name).Get(context.Background(), "settings", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "v3", cm.Data["version"], "region %s caught up", frozen)
	e.RecordHistories(t, contract.WorkflowID(name), name)
	e.MustFerry(t, "app", "delete", name, "--cascade")
}

// cordonNode makes the region's fake Node unschedulable, so that a
// Deployment there stays Progressing, until the returned func (or the
// test's end) makes it schedulable again.
func cordonNode(t *testing.T, e *e2etest.Env, region string) (uncordon func()) {
	t.Helper()
	cs := e.KubeClient(t, region)
	patch := func(unschedulable bool) error {
		_, err := cs.CoreV1().Nodes().Patch(context.Background(), "kwok-"+region, types.MergePatchType,
			[]byte(fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, unschedulable)), metav1.PatchOptions{})
		return err
	}
	require.NoError(t, patch(true))
	done := false
	uncordon = func() {
		if !done {
			done = true
			require.NoError(t, patch(false))
		}
	}
	t.Cleanup(uncordon)
	return uncordon
}

func wavedDeployment(wave int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {argocd.argoproj.io/sync-wave: "%d"}
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: main
          image: registry.invalid/web:v1
`, wave)
}

func wavedConfigMap(wave int, version string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations: {argocd.argoproj.io/sync-wave: \"%d\"}\ndata:\n  version: %s\n", wave, version)
}
