package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// guardedConfigMap is a ConfigMap carrying the sync-options annotation.
func guardedConfigMap(name, options string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  annotations:\n    argocd.argoproj.io/sync-options: %s\ndata:\n  k: v\n", name, options)
}

// configMapsIn reports which of the ConfigMaps exist in every region, in
// the namespace: "name=yes|no" per region.
func configMapsIn(t *testing.T, namespace string, names ...string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range regions {
		for _, n := range names {
			_, err := kubeClient(t, r).CoreV1().ConfigMaps(namespace).Get(context.Background(), n, metav1.GetOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				require.NoError(t, err)
			}
			out[r+"/"+n] = err == nil
		}
	}
	return out
}

func allAre(m map[string]bool, want bool) bool {
	for _, v := range m {
		if v != want {
			return false
		}
	}
	return len(m) > 0
}

// TestPruneAndDeleteConfirm: a prune that would delete a resource marked
// Prune=confirm waits, with nothing pruned and the operation Running and
// saying so, until ferry app confirm; then it prunes. A cascading delete
// held back by a resource marked Delete=confirm deletes nothing until
// confirmed, and the app shows the DeletionPending condition meanwhile.
func TestPruneAndDeleteConfirm(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	const name = "confirm"
	repo := newRepo(t, name)
	repo.write(map[string]string{
		"app/plain.yaml":   configMap("plain", "v1"),
		"app/guarded.yaml": guardedConfigMap("guarded", "Prune=confirm"),
		"app/vault.yaml":   guardedConfigMap("vault", "Delete=confirm,Prune=false"),
	})
	sha1 := repo.commitAndPush("three ConfigMaps")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, true, "3m")))
	waitApp(t, name, sha1, 3*time.Minute)

	out, err := ferry(t, "app", "confirm", name)
	require.Error(t, err, "nothing waits: %s", out)
	require.Contains(t, out, "nothing waits for a confirmation")

	// Both plain and guarded leave Git: the prune waits for the guarded one,
	// and prunes nothing meanwhile.
	repo.git("rm", "-q", "app/plain.yaml", "app/guarded.yaml")
	sha2 := repo.commitAndPush("remove two")
	mustFerry(t, "app", "refresh", name)
	eventually(t, 2*time.Minute, "the sync waits for its pruning confirmation", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		op := v.Status.OperationState
		return op != nil && op.Revision == sha2 && op.Phase == app.OperationRunning &&
			op.Message == "Waiting for pruning confirmation of v1/ConfigMap/guarded", fmt.Sprintf("%+v", op)
	})
	require.True(t, allAre(configMapsIn(t, name, "plain", "guarded"), true), "nothing pruned before the confirmation: %v", configMapsIn(t, name, "plain", "guarded"))
	require.Contains(t, mustFerry(t, "app", "get", name), "Running: Waiting for pruning confirmation of v1/ConfigMap/guarded")

	require.Contains(t, mustFerry(t, "app", "confirm", name), "confirmed: its prunes go on")
	waitApp(t, name, sha2, 2*time.Minute)
	eventually(t, time.Minute, "the confirmed sync pruned both", func() (bool, string) {
		got := configMapsIn(t, name, "plain", "guarded")
		return allAre(got, false), fmt.Sprint(got)
	})
	v, err := queryView(t, c, name)
	require.NoError(t, err)
	require.Equal(t, app.OperationSucceeded, v.Status.OperationState.Phase, v.Status.OperationState.Message)
	require.True(t, allAre(configMapsIn(t, name, "vault"), true))

	// The cascading delete waits for the vault's confirmation.
	out = mustFerry(t, "app", "delete", name, "--cascade")
	require.Contains(t, out, "is being deleted: Waiting for deletion confirmation of v1/ConfigMap/vault")
	require.Contains(t, out, "ferry app confirm "+name)
	v, err = queryView(t, c, name)
	require.NoError(t, err)
	require.Contains(t, fmt.Sprint(v.Status.Conditions), "DeletionPending")
	require.True(t, allAre(configMapsIn(t, name, "vault"), true), "nothing deleted before the confirmation")

	require.Contains(t, mustFerry(t, "app", "confirm", name), "deletion confirmed")
	eventually(t, 2*time.Minute, "the app and its resources are gone", func() (bool, string) {
		desc, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID(name), "")
		require.NoError(t, err)
		got := configMapsIn(t, name, "vault")
		status := desc.WorkflowExecutionInfo.GetStatus()
		return status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && allAre(got, false), fmt.Sprint(status, got)
	})
	recordHistories(t, name)
}
