package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	workflowpb "go.temporal.io/api/workflow/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestWorkerKilledMidSync: kill -9 of the only worker while a sync waits
// for health; a new worker finishes the same operation. One operation,
// Succeeded, nothing left Running, every object created once.
func TestWorkerKilledMidSync(t *testing.T) {
	w := startWorker(t)
	repo := newRepo(t, "durable")
	repo.write(map[string]string{"app/slow.yaml": e2etest.SlowDeployment("slow", 15), "app/next.yaml": e2etest.NextWave})
	sha := repo.commitAndPush("a slow deployment")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("durable", repo.URL, "app", "durable", false, "3m")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare", func() (bool, string) {
		v, err := queryView(t, c, "durable")
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})

	syncDone := make(chan string, 1)
	go func() {
		out, err := ferry(t, "app", "sync", "durable", "--wait")
		syncDone <- fmt.Sprintf("%v: %s", err, out)
	}()
	// Wait until the Deployment exists in every region: the sync now waits for its health before the next wave.
	uids := map[string]string{}
	eventually(t, time.Minute, "deployment created in every region", func() (bool, string) {
		for _, r := range regions {
			d, err := kubeClient(t, r).AppsV1().Deployments("durable").Get(context.Background(), "slow", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			uids[r] = string(d.UID)
		}
		return true, ""
	})
	v, err := queryView(t, c, "durable")
	require.NoError(t, err)
	require.NotNil(t, v.Status.OperationState)
	require.Equal(t, app.OperationRunning, v.Status.OperationState.Phase, "killed in the middle of the sync")
	w.kill9()
	startWorker(t)

	select {
	case out := <-syncDone:
		require.Contains(t, out, "Succeeded", out)
	case <-time.After(3 * time.Minute):
		t.Fatal("the sync did not finish after the worker was replaced")
	}
	st := waitApp(t, "durable", sha, time.Minute)
	require.Equal(t, "1", st.OperationState.ID, "one operation")
	require.Equal(t, app.OperationSucceeded, st.OperationState.Phase)
	require.Len(t, st.History, 1)
	for _, r := range regions {
		d, err := kubeClient(t, r).AppsV1().Deployments("durable").Get(context.Background(), "slow", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, uids[r], string(d.UID), "created once in %s", r)
	}
	mustFerry(t, "app", "delete", "durable", "--cascade")
	recordHistories(t, "durable")
}

// TestTemporalRestart: the dev server restarted on the same database file;
// the app workflow goes on and follows a new commit.
func TestTemporalRestart(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "restart")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.commitAndPush("v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("restart", repo.URL, "app", "restart", true, "3m")))
	waitApp(t, "restart", sha1, 2*time.Minute)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, stack.RestartTemporal(ctx))

	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha2 := repo.commitAndPush("v2")
	eventually(t, 2*time.Minute, "refresh accepted after the restart", func() (bool, string) {
		out, err := ferry(t, "app", "refresh", "restart")
		return err == nil, out
	})
	waitApp(t, "restart", sha2, 2*time.Minute)
	for _, r := range regions {
		cm, err := kubeClient(t, r).CoreV1().ConfigMaps("restart").Get(context.Background(), "settings", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "v2", cm.Data["version"], "region %s", r)
	}
	mustFerry(t, "app", "delete", "restart", "--cascade")
}

// TestAppGetWaitsOutAWorkerRestart: `ferry app get` asked while the app's
// workflow task has no worker (its worker stopped, the next one comes 12 s
// later, past the 10 s one query call gets) answers once the next worker is
// up, as kubectl get does while a controller restarts; it does not fail
// with the server's "query timed out before a worker could process it".
func TestAppGetWaitsOutAWorkerRestart(t *testing.T) {
	first := startWorker(t)
	const name = "restartget"
	repo := newRepo(t, name)
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, true, "3m")))
	waitApp(t, name, sha, 2*time.Minute)

	first.stop()
	// The refresh is a workflow task that no worker takes until the next
	// one starts; the server holds the query behind it.
	mustFerry(t, "app", "refresh", name)
	got := make(chan string, 1)
	go func() {
		out, err := ferry(t, "app", "get", name)
		got <- fmt.Sprintf("error %v: %s", err, out)
	}()
	time.Sleep(12 * time.Second)
	startWorker(t)
	select {
	case out := <-got:
		require.Contains(t, out, "error <nil>: ", out)
		require.Contains(t, out, "Synced", out)
	case <-time.After(2 * time.Minute):
		t.Fatal("ferry app get did not return within 2 minutes of the next worker's start")
	}
	mustFerry(t, "app", "delete", name, "--cascade")
}

func configMap(name, version string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  version: %s\n", name, version)
}

// TestSyncFailureRetriesThenFails: the API server refuses an object; the
// sync is retried per syncPolicy.retry, then Failed with the server's reason,
// and not retried again for the same revision. A fix in Git syncs.
func TestSyncFailureRetriesThenFails(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "retry")
	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\ndata:\n  k: v\n"
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1"), "app/bad.yaml": bad})
	repo.commitAndPush("an invalid name")
	spec := appYAML("retry", repo.URL, "app", "retry", true, "3m") +
		"    retry:\n      limit: 1\n      backoff: {duration: 1s, factor: 2, maxDuration: 5s}\n"
	mustFerry(t, "app", "apply", "-f", writeFile(t, spec))
	c := temporalClient(t)
	eventually(t, time.Minute, "sync failed after its retry", func() (bool, string) {
		v, err := queryView(t, c, "retry")
		if err != nil || v.Status.OperationState == nil {
			return false, fmt.Sprint(err)
		}
		op := v.Status.OperationState
		return op.Phase == app.OperationFailed && op.RetryCount == 1, fmt.Sprintf("%s retries %d: %s", op.Phase, op.RetryCount, op.Message)
	})
	v, err := queryView(t, c, "retry")
	require.NoError(t, err)
	require.Contains(t, v.Status.OperationState.Message, "Bad_Name")
	require.Equal(t, "1", v.Status.OperationState.ID, "not retried again for the same revision")

	repo.git("rm", "-q", "app/bad.yaml")
	sha := repo.commitAndPush("fix")
	mustFerry(t, "app", "refresh", "retry")
	waitApp(t, "retry", sha, time.Minute)
	mustFerry(t, "app", "delete", "retry", "--cascade")
	recordHistories(t, "retry")
}

// TestContinueAsNew: a worker that continues app workflows as new after
// three reconciles; the app keeps its status and history across runs,
// and each run its workflow task timeout.
func TestContinueAsNew(t *testing.T) {
	startWorker(t, "--max-reconciles", "3")
	repo := newRepo(t, "can")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("can", repo.URL, "app", "can", true, "1s")))
	waitApp(t, "can", sha, time.Minute)
	c := temporalClient(t)
	eventually(t, time.Minute, "several runs", func() (bool, string) {
		n := len(histories(t, c, "can"))
		return n >= 3, fmt.Sprintf("%d runs", n)
	})
	st := waitApp(t, "can", sha, time.Minute)
	require.Len(t, st.History, 1, "history carried across runs, no new sync")
	// Every run has the workflow task timeout the app was started with,
	// room for a new app's first render (temporal-cluster.md). The first
	// took the onboarding queue, where Ferry starts a new app; every later
	// one is on ferry.
	var runs []*workflowpb.WorkflowExecutionInfo
	for run := range histories(t, c, "can") {
		d, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID("can"), run)
		require.NoError(t, err)
		require.Equal(t, 30*time.Second, d.ExecutionConfig.GetDefaultWorkflowTaskTimeout().AsDuration(), "run %s", run)
		runs = append(runs, d.WorkflowExecutionInfo)
	}
	slices.SortFunc(runs, func(a, b *workflowpb.WorkflowExecutionInfo) int {
		return a.GetStartTime().AsTime().Compare(b.GetStartTime().AsTime())
	})
	for i, r := range runs {
		want := contract.TaskQueue
		if i == 0 {
			want = contract.OnboardTaskQueue
		}
		require.Equal(t, want, r.GetTaskQueue(), "run %d of %d (%s)", i+1, len(runs), r.GetExecution().GetRunId())
	}
	require.Equal(t, "1", st.OperationState.ID)
	mustFerry(t, "app", "delete", "can", "--cascade")
	recordHistories(t, "can")
}
