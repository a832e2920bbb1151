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
	"github.com/ferry-gitops/ferry/internal/hooks"
)

// preSyncJob is a PreSync hook Job; on kwok it completes in a second,
// unless its region's Node is cordoned, when its pod waits unscheduled.
const preSyncJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox:1.36, command: ["true"]}]
`

// TestRegionFrozenDuringPreSync: one region's kube-apiserver is frozen
// (SIGSTOP) while its PreSync hook Job waits (its Node cordoned, so the
// wait lasts). What a user sees: the operation ends without waiting for the
// hook's timeout (an hour), Failed, naming the region that stopped
// answering during its PreSync hooks, with no "(type: …)" of the SDK in
// what ferry app get shows; the two other regions synced the commit; the
// frozen one shown Unreachable. Once thawed, the region catches up with
// nobody doing anything.
func TestRegionFrozenDuringPreSync(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	const name = "frozenhooks"
	frozen, others := regions[1], []string{regions[0], regions[2]}
	repo := e.NewRepo(t, name)
	repo.Write(map[string]string{"app/migrate.yaml": preSyncJob, "app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.CommitAndPush("v1, behind a PreSync hook")
	e.Apply(t, e2etest.App{Name: name, RepoURL: repo.URL, Path: "app", Namespace: name, Regions: regions, Automated: true, Poll: "1h"})
	e.WaitApp(t, name, sha1, 3*time.Minute)

	uncordon := cordonNode(t, e, frozen)
	repo.Write(map[string]string{"app/migrate.yaml": preSyncJob, "app/cm.yaml": configMap("settings", "v2")})
	sha2 := repo.CommitAndPush("v2")
	e.MustFerry(t, "app", "refresh", name)

	var view contract.View
	get := func() string {
		require.NoError(t, json.Unmarshal([]byte(e.MustFerry(t, "app", "get", name, "-o", "json")), &view))
		return e2etest.Describe(&view.Status)
	}
	e2etest.Eventually(t, 2*time.Minute, "v2's PreSync Job waiting in "+frozen, func() (bool, string) {
		state := get()
		op := view.Status.OperationState
		if op == nil || op.Revision != sha2 || op.Phase != app.OperationRunning {
			return false, state
		}
		job, err := e.KubeClient(t, frozen).BatchV1().Jobs(name).Get(context.Background(), "migrate", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return strings.HasPrefix(job.Annotations[hooks.AnnotationOperation], op.ID+"-") && job.Status.Succeeded == 0,
			"Job/migrate of " + job.Annotations[hooks.AnnotationOperation] + "; " + state
	})

	thaw := freeze(t, frozen)

	e2etest.Eventually(t, 3*time.Minute, "the operation of v2 ended with "+frozen+" Unreachable", func() (bool, string) {
		state := get()
		op := view.Status.OperationState
		return op != nil && op.Revision == sha2 && op.Phase != app.OperationRunning && view.Status.Regions[frozen].Unreachable, state
	})
	op := view.Status.OperationState
	t.Logf("operation %s: %s", op.Phase, op.Message)
	require.Equal(t, app.OperationFailed, op.Phase)
	require.Contains(t, op.Message, frozen+": Unreachable: region "+frozen+": its API server stopped answering during its PreSync hooks")
	require.NotContains(t, op.Message, "(type:", "the SDK's suffix is no user's to read")
	require.NotContains(t, op.Message, "nothing of the Sync phase was applied", "the other regions synced")
	sum := view.Status.Regions[frozen]
	t.Logf("status.regions[%s]: %s/%s: %s", frozen, sum.Sync, sum.Health, sum.Message)
	require.Contains(t, sum.Message, "stopped answering during its PreSync hooks")
	for _, c := range view.Status.Conditions {
		require.NotContains(t, c.Message, "(type:", "condition %s", c.Type)
	}
	for _, r := range others {
		require.Equal(t, app.SyncStatusSynced, view.Status.Regions[r].Sync, "region %s", r)
		require.Equal(t, sha2, view.Status.Regions[r].SyncedRevision, "region %s", r)
		cm, err := e.KubeClient(t, r).CoreV1().ConfigMaps(name).Get(context.Background(), "settings", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "v2", cm.Data["version"], "region %s", r)
	}
	table := e.MustFerry(t, "app", "get", name)
	require.Contains(t, rowOf(table, frozen), "Unreachable", "ferry app get:\n%s", table)
	require.NotContains(t, table, "(type:", "ferry app get:\n%s", table)
	for _, r := range others {
		require.Contains(t, rowOf(table, r), "Synced", "ferry app get:\n%s", table)
	}

	// Thawed (and its Node schedulable again): the region catches up, its
	// PreSync hook first.
	thaw()
	uncordon()
	st := e.WaitApp(t, name, sha2, 3*time.Minute)
	require.False(t, st.Regions[frozen].Unreachable)
	cm, err := e.KubeClient(t, frozen).CoreV1().ConfigMaps(name).Get(context.Background(), "settings", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "v2", cm.Data["version"], "region %s caught up", frozen)
	job, err := e.KubeClient(t, frozen).BatchV1().Jobs(name).Get(context.Background(), "migrate", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(1), job.Status.Succeeded, "the PreSync hook ran in %s before its sync", frozen)
	e.RecordHistories(t, contract.WorkflowID(name), name)
	e.MustFerry(t, "app", "delete", name, "--cascade")
}
