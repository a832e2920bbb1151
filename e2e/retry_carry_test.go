package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// retryingForEverApp applies an app whose wave 0 stays Degraded, retried
// for ever, from path in a new repository that also holds a path "fixed"
// with one ConfigMap.
func retryingForEverApp(t *testing.T, name, backoff string) (manifest func(path string) string) {
	t.Helper()
	repo := newRepo(t, name)
	repo.write(map[string]string{
		"app/pod.yaml":  failingPod("fails", "0"),
		"app/cm.yaml":   inWave(configMap("later", "v1"), "1"),
		"fixed/cm.yaml": configMap("fixed", "v1"),
	})
	repo.commitAndPush("a wave that stays Degraded, and a path that syncs")
	manifest = func(path string) string {
		return appYAML(name, repo.URL, path, name, false, "3m") +
			fmt.Sprintf("    retry: {limit: -1, backoff: {duration: %s, maxDuration: %s}}\n", backoff, backoff)
	}
	mustFerry(t, "app", "apply", "-f", writeFile(t, manifest("app")))
	c := temporalClient(t)
	eventually(t, time.Minute, "first compare of "+name, func() (bool, string) {
		v, err := queryView(t, c, name)
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})
	return manifest
}

// runID is the run of the app's workflow that runs now.
func runID(t *testing.T, name string) string {
	t.Helper()
	d, err := temporalClient(t).DescribeWorkflowExecution(context.Background(), contract.WorkflowID(name), "")
	require.NoError(t, err)
	return d.WorkflowExecutionInfo.Execution.RunId
}

// TestAnOperationRetryingForEverContinuesAsNew: a worker whose app runs
// continue as new after two reconciles (--max-reconciles 2) runs a sync
// that retries for ever. Between two retries the workflow continues as
// new, and the operation goes on in the new run: ferry app get shows the
// same operation Running, its retry count going on; the sync's --wait
// follows it there; terminate-op stops it, and it ends with its start.
func TestAnOperationRetryingForEverContinuesAsNew(t *testing.T) {
	startWorker(t, "--max-reconciles", "2")
	const name = "retrycan"
	retryingForEverApp(t, name, "2s")
	type result struct {
		out string
		err error
	}
	waited := make(chan result, 1)
	// Not ferry(): its three minutes may end before the operation does.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	wait := exec.CommandContext(ctx, testEnv().Bin(t, "ferry"), "app", "sync", name, "--wait")
	wait.Env = testEnv().Environ()
	go func() {
		out, err := wait.CombinedOutput()
		waited <- result{string(out), err}
	}()
	var running *app.OperationState
	eventually(t, 3*time.Minute, name+" retries its failing sync", func() (bool, string) {
		v, err := queryView(t, temporalClient(t), name)
		if err != nil || v.Status.OperationState == nil {
			return false, fmt.Sprint(err)
		}
		running = v.Status.OperationState
		return running.Phase == app.OperationRunning && running.RetryCount >= 1, fmt.Sprintf("%s retry %d", running.Phase, running.RetryCount)
	})
	before := runID(t, name)
	var op *app.OperationState
	eventually(t, 3*time.Minute, "the workflow continues as new between two retries", func() (bool, string) {
		op = lastOp(t, name)
		now := runID(t, name)
		return now != before && op.RetryCount > running.RetryCount+1, fmt.Sprintf("run %s, %s retry %d", now, op.Phase, op.RetryCount)
	})
	require.Equal(t, running.ID, op.ID, "the same operation goes on in the new run")
	require.Equal(t, app.OperationRunning, op.Phase, op.Message)
	require.True(t, running.StartedAt.Equal(op.StartedAt), "the operation keeps its start")
	out := mustFerry(t, "app", "get", name)
	// Argo CD's words: waiting ("ERR. Retrying attempt #N at 3:04PM."), or
	// in the retry's attempt ("Retrying operation. Attempt #N").
	require.Regexp(t, fmt.Sprintf(`Operation:     %s Running: (.+\. Retrying attempt #\d+ at \d{1,2}:\d\d[AP]M\.|Retrying operation\. Attempt #\d+)\n`, op.ID), out)
	select {
	case r := <-waited:
		t.Fatalf("ferry app sync --wait returned while the operation runs: %v: %s", r.err, r.out)
	default:
	}

	out = mustFerry(t, "app", "terminate-op", name)
	require.Contains(t, out, "Operation terminated", out)
	ended := lastOp(t, name)
	require.Equal(t, running.ID, ended.ID)
	require.Equal(t, app.OperationFailed, ended.Phase, ended.Message)
	require.True(t, strings.HasPrefix(ended.Message, "Operation terminated"), ended.Message)
	require.GreaterOrEqual(t, ended.RetryCount, op.RetryCount)
	require.True(t, running.StartedAt.Equal(ended.StartedAt))
	r := <-waited
	require.Error(t, r.err, "the sync --wait fails with the terminated operation: %s", r.out)
	require.Contains(t, r.out, "Operation terminated", r.out)

	mustFerry(t, "app", "delete", name, "--cascade")
	recordHistories(t, name)
}

// TestASpecUpdateTakesEffectAtTheNextRetry: a sync that retries for ever
// on a path whose wave stays Degraded; a ferry app apply with a fixed
// path during the retries: the next attempt renders and syncs the new
// path, and the same operation succeeds, as in Argo CD.
func TestASpecUpdateTakesEffectAtTheNextRetry(t *testing.T) {
	startWorker(t)
	const name = "retryspec"
	manifest := retryingForEverApp(t, name, "5s")
	running := retryingSync(t, name)
	mustFerry(t, "app", "apply", "-f", writeFile(t, manifest("fixed")))
	var op *app.OperationState
	eventually(t, 3*time.Minute, "the retried operation succeeds with the new path", func() (bool, string) {
		op = lastOp(t, name)
		return op.ID != running.ID || op.Phase != app.OperationRunning, fmt.Sprintf("%s %s retry %d: %s", op.ID, op.Phase, op.RetryCount, op.Message)
	})
	require.Equal(t, running.ID, op.ID, "the same operation")
	require.Equal(t, app.OperationSucceeded, op.Phase, op.Message)
	require.GreaterOrEqual(t, op.RetryCount, running.RetryCount)
	for _, r := range regions {
		cm, err := kubeClient(t, r).CoreV1().ConfigMaps(name).Get(context.Background(), "fixed", metav1.GetOptions{})
		require.NoError(t, err, "%s: the new path's ConfigMap", r)
		require.Equal(t, "v1", cm.Data["version"], r)
	}
	v, err := queryView(t, temporalClient(t), name)
	require.NoError(t, err)
	require.Equal(t, "fixed", v.Spec.Source.Path)
	recordHistories(t, name)
}
