package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// retryingSync starts a manual sync of an app whose wave 0 stays Degraded
// and returns once the operation retries (retry.limit -1: for ever).
func retryingSync(t *testing.T, name string) *app.OperationState {
	t.Helper()
	mustFerry(t, "app", "sync", name)
	var op *app.OperationState
	eventually(t, 3*time.Minute, name+" retries its failing sync", func() (bool, string) {
		op = lastOp(t, name)
		return op.Phase == app.OperationRunning && op.RetryCount >= 1, fmt.Sprintf("%s retry %d: %s", op.Phase, op.RetryCount, op.Message)
	})
	return op
}

// TestTerminateOpStopsAnOperationThatRetriesForEver: a sync whose wave 0
// stays Degraded (so wave 1 is never applied) retries for ever. ferry app terminate-op stops it: it
// ends Failed with Argo CD's "Operation terminated" and what it did (the
// failing Pod's result), no retry follows, and the app goes on (a refresh
// compares it again). A second such operation does not hold back a delete
// sent while it retries: the delete completes and removes the app.
func TestTerminateOpStopsAnOperationThatRetriesForEver(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	const name = "terminateop"
	repo := newRepo(t, name)
	repo.write(map[string]string{
		"app/pod.yaml": failingPod("fails", "0"),
		"app/cm.yaml":  inWave(configMap("later", "v1"), "1"),
	})
	repo.commitAndPush("a wave that stays Degraded")
	manifest := appYAML(name, repo.URL, "app", name, false, "3m") +
		"    retry: {limit: -1, backoff: {duration: 2s, maxDuration: 2s}}\n"
	mustFerry(t, "app", "apply", "-f", writeFile(t, manifest))
	eventually(t, time.Minute, "first compare of "+name, func() (bool, string) {
		v, err := queryView(t, c, name)
		return err == nil && v.Status.Sync.Status == app.SyncStatusOutOfSync, fmt.Sprint(err)
	})

	running := retryingSync(t, name)
	out := mustFerry(t, "app", "terminate-op", name)
	require.Contains(t, out, "Operation terminated", out)
	op := lastOp(t, name)
	require.Equal(t, running.ID, op.ID, "the retrying operation was terminated")
	require.Equal(t, app.OperationFailed, op.Phase, op.Message)
	require.True(t, strings.HasPrefix(op.Message, "Operation terminated"), op.Message)
	require.NotNil(t, op.FinishedAt, "it ended")
	retries := op.RetryCount

	// The app goes on: a refresh compares again, and the operation stays
	// as it ended (no retry after the termination).
	terminatedAt := *op.FinishedAt
	mustFerry(t, "app", "refresh", name)
	eventually(t, time.Minute, "a reconcile after the termination", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil || v.Status.ReconciledAt == nil {
			return false, fmt.Sprint(err)
		}
		return v.Status.ReconciledAt.After(terminatedAt), v.Status.ReconciledAt.String()
	})
	after := lastOp(t, name)
	require.Equal(t, op.ID, after.ID)
	require.Equal(t, app.OperationFailed, after.Phase)
	require.Equal(t, retries, after.RetryCount, "no retry followed the termination")
	_, err := ferry(t, "app", "terminate-op", name)
	require.Error(t, err, "nothing runs now: terminate-op is refused")

	// A delete while the next operation retries completes.
	retryingSync(t, name)
	mustFerry(t, "app", "delete", name, "--cascade")
	eventually(t, time.Minute, "the app's workflow ends", func() (bool, string) {
		d, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID(name), "")
		if err != nil {
			var nf *serviceerror.NotFound
			return errors.As(err, &nf), err.Error()
		}
		return d.WorkflowExecutionInfo.CloseTime != nil, d.WorkflowExecutionInfo.Status.String()
	})
	eventually(t, time.Minute, "the cascading delete removes the Pod", func() (bool, string) {
		for _, r := range regions {
			_, err := kubeClient(t, r).CoreV1().Pods(name).Get(context.Background(), "fails", metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return false, fmt.Sprintf("%s: %v", r, err)
			}
		}
		return true, ""
	})
	recordHistories(t, name)
}
