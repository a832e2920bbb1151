package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestASyncJumpsTheQueue: the one activity slot of a region's worker for
// routine work is held by a new app's PreSync hook that cannot run. The
// worker takes no more routine work: new apps' first compares and syncs
// wait in Temporal's queue, and nothing that runs times out. A user's sync,
// asked for last, does not wait: it goes to the region's urgent queue,
// whose slot is its own, and ends while the routine slot is still held.
func TestASyncJumpsTheQueue(t *testing.T) {
	const region = "us-east-1"
	startWorkerWith(t, "--control")
	startWorkerWith(t, "--region", region, "--activity-task-slots", "1")
	repo := newRepo(t, "queue")
	repo.write(map[string]string{
		"urgent/cm.yaml": configMap("settings", "v1"),
		"bulk/cm.yaml":   configMap("settings", "v1"),
		"hold/cm.yaml":   configMap("settings", "v1"),
		"hold/job.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: hold
  annotations: {argocd.argoproj.io/hook: PreSync}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {pool: none-such}
      containers: [{name: main, image: busybox:1.36, command: ["true"]}]
`,
	})
	repo.commitAndPush("v1")
	c := temporalClient(t)
	bulk := []string{"queue-bulk-0", "queue-bulk-1", "queue-bulk-2"}
	all := append([]string{"queue-urgent", "queue-hold"}, bulk...)
	kc := kubeClient(t, region)
	bg := metav1.DeletePropagationBackground
	release := func() error {
		return kc.BatchV1().Jobs("queue-hold").Delete(context.Background(), "hold", metav1.DeleteOptions{PropagationPolicy: &bg})
	}
	t.Cleanup(func() {
		_ = release()
		for _, name := range all {
			_, _ = ferry(t, "app", "delete", name, "--cascade")
		}
	})

	mustFerry(t, "app", "apply", "-f", writeFile(t, oneRegionApp("queue-urgent", repo.URL, "urgent", region, false)))
	mustFerry(t, "app", "sync", "queue-urgent")

	// The hook holds the routine slot: a new app's first sync is routine
	// work, and its Job's pod finds no node.
	mustFerry(t, "app", "apply", "-f", writeFile(t, oneRegionApp("queue-hold", repo.URL, "hold", region, true)))
	eventually(t, time.Minute, "the PreSync Job created", func() (bool, string) {
		_, err := kc.BatchV1().Jobs("queue-hold").Get(context.Background(), "hold", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})

	for _, name := range bulk {
		mustFerry(t, "app", "apply", "-f", writeFile(t, oneRegionApp(name, repo.URL, "bulk", region, true)))
	}
	for _, name := range bulk {
		waitScheduled(t, name)
	}
	repo.write(map[string]string{"urgent/cm.yaml": configMap("settings", "v2")})
	sha := repo.commitAndPush("v2")
	out, err := ferry(t, "app", "sync", "queue-urgent", "--revision", sha, "--wait", "--timeout", "2m")
	require.NoError(t, err, "the user's sync ends while the routine slot is held: %s", out)
	v, err := queryView(t, c, "queue-urgent")
	require.NoError(t, err)
	require.Equal(t, sha, v.Status.Sync.Revision)
	require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status)
	for _, name := range bulk {
		require.Empty(t, regionStarts(t, name), "%s's first compare, queued before the user's sync, waits for the held slot", name)
	}
	_, err = kc.BatchV1().Jobs("queue-hold").Get(context.Background(), "hold", metav1.GetOptions{})
	require.NoError(t, err, "the holding hook still runs")

	// Free the slot: the hook's Job goes, the hook fails, the queue moves.
	require.NoError(t, release())
	eventually(t, 2*time.Minute, "the holding sync failed once its Job was gone", func() (bool, string) {
		v, err := queryView(t, c, "queue-hold")
		if err != nil {
			return false, err.Error()
		}
		op := v.Status.OperationState
		return op != nil && strings.Contains(op.Message, "deleted while it ran"), e2etest.Describe(&v.Status)
	})
	for _, name := range bulk {
		waitRegionSynced(t, name, region)
	}
	for _, name := range all {
		for _, ev := range events(t, c, name) {
			if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil {
				require.NotEqual(t, enumspb.TIMEOUT_TYPE_HEARTBEAT, a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType(), "%s: an activity timed out while it ran", name)
				require.NotEqual(t, enumspb.TIMEOUT_TYPE_START_TO_CLOSE, a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType(), "%s: an activity timed out while it ran", name)
			}
		}
	}
	recordHistories(t, "queue-urgent")
}

// oneRegionApp is an Application of path to region alone, into a namespace
// named after it.
func oneRegionApp(name, repoURL, path, region string, automated bool) string {
	policy := "  syncPolicy:\n    syncOptions: [CreateNamespace=true]\n"
	if automated {
		policy += "    automated: {prune: true}\n"
	}
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %[1]s}
spec:
  pollInterval: 1h
  source: {repoURL: %[2]s, targetRevision: main, path: %[3]s}
  destinations: [{name: %[4]s, namespace: %[1]s}]
`, name, repoURL, path, region) + policy
}

// waitScheduled waits until the app's workflow has a region activity in
// Temporal's queue, not yet taken by a worker.
func waitScheduled(t *testing.T, name string) {
	t.Helper()
	c := temporalClient(t)
	eventually(t, time.Minute, name+": a region activity queued", func() (bool, string) {
		d, err := c.DescribeWorkflowExecution(context.Background(), contract.WorkflowID(name), "")
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, a := range d.GetPendingActivities() {
			seen = append(seen, fmt.Sprintf("%s %s", a.GetActivityType().GetName(), a.GetState()))
			if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED && isRegionActivity(a.GetActivityType().GetName()) {
				return true, ""
			}
		}
		return false, strings.Join(seen, ", ")
	})
}

func isRegionActivity(name string) bool {
	return name == contract.ActivityCompare || name == contract.ActivitySync
}

// regionStarts are the times the app's region activities started, in order.
func regionStarts(t *testing.T, name string) []time.Time {
	t.Helper()
	evs := events(t, temporalClient(t), name)
	scheduled := map[int64]*historypb.HistoryEvent{}
	var out []time.Time
	for _, ev := range evs {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED {
			clear(scheduled) // a run's event IDs are its own
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && isRegionActivity(a.GetActivityType().GetName()) {
			scheduled[ev.GetEventId()] = ev
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] != nil {
			out = append(out, ev.GetEventTime().AsTime())
		}
	}
	return out
}

func waitRegionSynced(t *testing.T, name, region string) {
	t.Helper()
	c := temporalClient(t)
	eventually(t, 2*time.Minute, name+" Synced", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Regions[region].Sync == app.SyncStatusSynced, fmt.Sprintf("%+v", v.Status.Regions)
	})
}
