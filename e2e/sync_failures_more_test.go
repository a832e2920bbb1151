package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestSyncFailRunsAfterAFailedPostSyncHook: as in Argo CD, a PostSync hook
// that fails runs the SyncFail hooks and fails the operation.
func TestSyncFailRunsAfterAFailedPostSyncHook(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "postsyncfail")
	repo.write(map[string]string{
		"app/cm.yaml":     configMap("settings", "v1"),
		"app/post.yaml":   hookJobYAML("smoke-test", "PostSync", "BeforeHookCreation", true),
		"app/notify.yaml": hookJobYAML("notify-failure", "SyncFail", "BeforeHookCreation", false),
	})
	repo.commitAndPush("a PostSync hook that fails")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("postsyncfail", repo.URL, "app", "postsyncfail", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "postsyncfail")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	_, _ = ferry(t, "app", "sync", "postsyncfail", "--wait")
	var op *app.OperationState
	eventually(t, 2*time.Minute, "the PostSync outcome", func() (bool, string) {
		got, why := pollOp(t, "postsyncfail")
		if got == nil {
			return false, why
		}
		op = got
		return op.PostSync != nil && op.PostSync.Phase == app.OperationFailed, fmt.Sprintf("%+v", op.PostSync)
	})
	require.Equal(t, app.OperationFailed, op.Phase, "a failed PostSync hook fails the operation: %s", op.Message)
	require.Contains(t, op.Message, "PostSync hook Job/postsyncfail/smoke-test failed")
	require.Contains(t, op.Message, "2 SyncFail hooks ran")
	var syncFail []string
	for _, r := range op.PostSync.Results {
		if r.HookType == contract.HookSyncFail {
			syncFail = append(syncFail, fmt.Sprintf("%s %s/%s %s", r.Region, r.Kind, r.Name, r.HookPhase))
		}
	}
	require.ElementsMatch(t, []string{"us-east-1 Job/notify-failure Succeeded", "eu-west-1 Job/notify-failure Succeeded"}, syncFail)
	for _, r := range regions {
		_, err := kubeClient(t, r).BatchV1().Jobs("postsyncfail").Get(context.Background(), "notify-failure", metav1.GetOptions{})
		require.NoError(t, err, "the SyncFail hook ran in %s", r)
	}
	mustFerry(t, "app", "delete", "postsyncfail", "--cascade")
	recordHistories(t, "postsyncfail")
	recordWorkflowHistories(t, op.PostSync.WorkflowID, "postsyncfail-postsync")
}

// TestARefusedCommitGetsAnAutomatedSyncAttempt: a commit sets
// revisionHistoryLimit: badValue. As in Argo CD the app is OutOfSync (not
// Unknown), the automated sync is tried and fails with the API server's
// reason as the object's result, and the SyncError condition says so; the
// fixing commit syncs and clears it.
func TestARefusedCommitGetsAnAutomatedSyncAttempt(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "badvalue")
	deployment := func(limit string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  revisionHistoryLimit: ` + limit + `
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.invalid/web:v1}]
`
	}
	repo.write(map[string]string{"app/web.yaml": deployment("3")})
	sha1 := repo.commitAndPush("v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("badvalue", repo.URL, "app", "badvalue", true, "3m")))
	waitApp(t, "badvalue", sha1, 2*time.Minute)

	repo.write(map[string]string{"app/web.yaml": deployment("badValue")})
	sha2 := repo.commitAndPush("a value the API server refuses")
	mustFerry(t, "app", "refresh", "badvalue")
	c := temporalClient(t)
	var st app.Status
	eventually(t, 2*time.Minute, "the automated sync of "+short(sha2)+" failed", func() (bool, string) {
		v, err := queryView(t, c, "badvalue")
		if err != nil || v.Status.OperationState == nil {
			return false, fmt.Sprint(err)
		}
		st = v.Status
		op := st.OperationState
		return op.Revision == sha2 && op.Phase == app.OperationFailed, fmt.Sprintf("%s %s: %s", short(op.Revision), op.Phase, op.Message)
	})
	require.Equal(t, app.SyncStatusOutOfSync, st.Sync.Status, "OutOfSync, not Unknown")
	for _, r := range regions {
		res, ok := resultOf(st.OperationState, r, "Deployment", "web")
		require.True(t, ok, "the Deployment's result in %s: %v", r, resultsOf(st.OperationState))
		require.Equal(t, app.ActionFailed, res.Action)
		require.Contains(t, res.Message, "revisionHistoryLimit", "the object's result names the field")
	}
	var syncErr string
	for _, cond := range st.Conditions {
		if cond.Type == "SyncError" {
			syncErr = cond.Message
		}
	}
	require.True(t, strings.HasPrefix(syncErr, "Failed last sync attempt to ["+sha2+"]: "), "SyncError: %q (%+v)", syncErr, st.Conditions)

	repo.write(map[string]string{"app/web.yaml": deployment("5")})
	sha3 := repo.commitAndPush("fixed")
	mustFerry(t, "app", "refresh", "badvalue")
	fixed := waitApp(t, "badvalue", sha3, 2*time.Minute)
	for _, cond := range fixed.Conditions {
		require.NotEqual(t, "SyncError", cond.Type, "the good sync cleared it: %+v", fixed.Conditions)
	}
	mustFerry(t, "app", "delete", "badvalue", "--cascade")
	recordHistories(t, "badvalue")
}
