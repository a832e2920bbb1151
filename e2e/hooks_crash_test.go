package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// gatedHookJob is a PreSync Job whose pod waits behind a scheduling gate
// until the test removes it: on kwok a Job otherwise completes in a second.
const gatedHookJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/hook: PreSync
spec:
  backoffLimit: 0
  template:
    spec:
      schedulingGates: [{name: ferry.dev/hold}]
      restartPolicy: Never
      containers: [{name: main, image: busybox:1.36, command: ["true"]}]
`

// TestWorkerKilledWhileAPreSyncHookRuns: kill -9 of the only worker while
// a PreSync Job runs. The retried hook activity, on a new worker, finds the
// Job the first attempt created and waits for it: one Job per region (the
// same UID), and the sync completes once the Job does.
func TestWorkerKilledWhileAPreSyncHookRuns(t *testing.T) {
	w := startWorker(t)
	repo := newRepo(t, "hookcrash")
	repo.write(map[string]string{"app/migrate.yaml": gatedHookJob, "app/cm.yaml": configMap("settings", "v1")})
	repo.commitAndPush("a PreSync hook that waits for the test")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("hookcrash", repo.URL, "app", "hookcrash", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "hookcrash")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	syncDone := make(chan string, 1)
	go func() {
		out, err := ferry(t, "app", "sync", "hookcrash", "--wait")
		syncDone <- fmt.Sprintf("%v: %s", err, out)
	}()
	uids := map[string]string{}
	eventually(t, time.Minute, "the PreSync Job in every region", func() (bool, string) {
		for _, r := range regions {
			j, err := kubeClient(t, r).BatchV1().Jobs("hookcrash").Get(context.Background(), "migrate", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			uids[r] = string(j.UID)
		}
		return true, ""
	})
	require.Equal(t, app.OperationRunning, lastOp(t, "hookcrash").Phase)
	w.kill9()
	startWorker(t)

	eventually(t, 2*time.Minute, "a new worker retries the hook activity", func() (bool, string) {
		desc, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID("hookcrash"), "")
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, a := range desc.PendingActivities {
			seen = append(seen, fmt.Sprintf("%s attempt %d %s", a.ActivityType.GetName(), a.Attempt, a.State))
			if a.ActivityType.GetName() == contract.ActivityRunHooks && a.Attempt >= 2 && a.State == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				return true, ""
			}
		}
		return false, fmt.Sprint(seen)
	})
	for _, r := range regions {
		cs := kubeClient(t, r)
		_, err := cs.CoreV1().ConfigMaps("hookcrash").Get(context.Background(), "settings", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "nothing of the Sync phase while PreSync runs in %s: %v", r, err)
		pods, err := cs.CoreV1().Pods("hookcrash").List(context.Background(), metav1.ListOptions{LabelSelector: "job-name=migrate"})
		require.NoError(t, err)
		require.Len(t, pods.Items, 1, "one pod of one Job in %s", r)
		pod := pods.Items[0]
		pod.Spec.SchedulingGates = nil
		_, err = cs.CoreV1().Pods("hookcrash").Update(context.Background(), &pod, metav1.UpdateOptions{})
		require.NoError(t, err, "lift the scheduling gate in %s", r)
	}
	select {
	case out := <-syncDone:
		require.Contains(t, out, "Succeeded", out)
	case <-time.After(3 * time.Minute):
		t.Fatal("the sync did not finish after the worker was replaced")
	}
	op := lastOp(t, "hookcrash")
	require.Equal(t, "1", op.ID, "one operation")
	require.Equal(t, app.OperationSucceeded, op.Phase)
	for _, r := range regions {
		cs := kubeClient(t, r)
		jobs, err := cs.BatchV1().Jobs("hookcrash").List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		require.Len(t, jobs.Items, 1, "exactly one hook Job in %s", r)
		require.Equal(t, uids[r], string(jobs.Items[0].UID), "created once in %s", r)
		_, err = cs.CoreV1().ConfigMaps("hookcrash").Get(context.Background(), "settings", metav1.GetOptions{})
		require.NoError(t, err, "the Sync phase ran in %s", r)
	}
	mustFerry(t, "app", "delete", "hookcrash", "--cascade")
	recordHistories(t, "hookcrash")
}

// TestHelmHooksRunInTheirPhasesByWeight syncs Argo CD's helm-hooks example:
// pre-install hooks run before the chart's objects in the order of their
// weights, post-install after them in the PostSync workflow.
func TestHelmHooksRunInTheirPhasesByWeight(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "helmhooks")
	repo.copyDir(filepath.Join(corpus, "helm-hooks"), "helm-hooks")
	repo.commitAndPush("Argo CD's helm-hooks example")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("helmhooks", repo.URL, "helm-hooks", "helmhooks", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "helmhooks")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	mustFerry(t, "app", "sync", "helmhooks", "--wait")
	eventually(t, 2*time.Minute, "post-install hooks done", func() (bool, string) {
		op, why := pollOp(t, "helmhooks")
		if op == nil {
			return false, why
		}
		return op.PostSync != nil && op.PostSync.Phase == app.OperationSucceeded, fmt.Sprintf("%+v", op.PostSync)
	})
	schema := regexp.MustCompile(`^upgrade-sql-schema[a-z0-9]{5}$`)
	for _, r := range regions {
		cs := kubeClient(t, r)
		jobs, err := cs.BatchV1().Jobs("helmhooks").List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		created := map[string]time.Time{}
		for _, j := range jobs.Items {
			name := j.Name
			if schema.MatchString(name) {
				name = "upgrade-sql-schema"
			}
			created[name] = j.CreationTimestamp.Time
		}
		rs, err := cs.AppsV1().ReplicaSets("helmhooks").Get(context.Background(), "frontend", metav1.GetOptions{})
		require.NoError(t, err)
		order := []time.Time{created["upgrade-sql-schema"], created["maint-page-up"], rs.CreationTimestamp.Time, created["maint-page-down"]}
		for i, at := range order {
			require.False(t, at.IsZero(), "%s: step %d ran", r, i)
			if i > 0 {
				require.False(t, at.Before(order[i-1]), "%s: step %d before step %d: %v", r, i, i-1, order)
			}
		}
	}
	mustFerry(t, "app", "delete", "helmhooks", "--cascade")
}

// TestPostDeleteHooksRunAfterACascadingDelete: the PostDelete Job runs in
// every region once the app's resources are gone, not before.
func TestPostDeleteHooksRunAfterACascadingDelete(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "postdelete")
	repo.write(map[string]string{
		"app/cm.yaml":      configMap("settings", "v1"),
		"app/cleanup.yaml": hookJobYAML("cleanup", "PostDelete", "BeforeHookCreation", false),
	})
	repo.commitAndPush("a PostDelete hook")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("postdelete", repo.URL, "app", "postdelete", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "postdelete")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	mustFerry(t, "app", "sync", "postdelete", "--wait")
	for _, r := range regions {
		gone, msg := jobGone(t, r, "postdelete", "cleanup")
		require.True(t, gone, "no PostDelete hook before the delete: %s", msg)
	}
	mustFerry(t, "app", "delete", "postdelete", "--cascade")
	for _, r := range regions {
		cs := kubeClient(t, r)
		_, err := cs.CoreV1().ConfigMaps("postdelete").Get(context.Background(), "settings", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "the app's resources are gone in %s: %v", r, err)
		j, err := cs.BatchV1().Jobs("postdelete").Get(context.Background(), "cleanup", metav1.GetOptions{})
		require.NoError(t, err, "the PostDelete hook ran in %s", r)
		require.NotNil(t, j.Status.CompletionTime, "and completed before the delete returned")
	}
	desc, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID("postdelete"), "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, desc.WorkflowExecutionInfo.Status, "the app is gone")
	recordHistories(t, "postdelete")
}
