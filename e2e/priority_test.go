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
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestASyncJumpsTheQueue: the one activity slot of a region's worker is
// held by a PreSync hook that cannot run. The worker takes no more work:
// new apps' first compares and syncs and then a user's sync wait in
// Temporal's queue, and nothing that runs times out. When the slot frees,
// the user's sync, asked for last, goes first.
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

	// The hook holds the slot: its Job's pod finds no node.
	mustFerry(t, "app", "apply", "-f", writeFile(t, oneRegionApp("queue-hold", repo.URL, "hold", region, false)))
	held := make(chan string, 1)
	go func() { out, _ := ferry(t, "app", "sync", "queue-hold", "--wait"); held <- out }()
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
	sha := func() string {
		repo.write(map[string]string{"urgent/cm.yaml": configMap("settings", "v2")})
		return repo.commitAndPush("v2")
	}()
	type result struct {
		out string
		err error
	}
	synced := make(chan result, 1)
	asked := time.Now()
	go func() {
		out, err := ferry(t, "app", "sync", "queue-urgent", "--revision", sha, "--wait")
		synced <- result{out, err}
	}()
	t.Cleanup(func() {
		select {
		case r := <-synced:
			t.Logf("ferry app sync queue-urgent: %v\n%s", r.err, r.out)
		default:
		}
	})
	waitScheduled(t, "queue-urgent")

	// Free the slot: the hook's Job goes, the hook fails.
	require.NoError(t, release())
	select {
	case r := <-synced:
		require.NoError(t, r.err, "ferry app sync queue-urgent: %s", r.out)
	case <-time.After(3 * time.Minute):
		t.Fatal("the user's sync did not end")
	}
	v, err := queryView(t, c, "queue-urgent")
	require.NoError(t, err)
	require.Equal(t, sha, v.Status.Sync.Revision)
	require.Equal(t, app.SyncStatusSynced, v.Status.Sync.Status)
	require.Contains(t, <-held, "deleted while it ran", "the holding hook failed once its Job was gone")

	var urgent time.Time
	for _, at := range regionStarts(t, "queue-urgent") {
		if at.After(asked) {
			urgent = at
			break
		}
	}
	require.False(t, urgent.IsZero(), "the user's sync started a region activity")
	for _, name := range bulk {
		waitRegionSynced(t, name, region)
		starts := regionStarts(t, name)
		require.NotEmpty(t, starts, name)
		require.True(t, urgent.Before(starts[0]),
			"the user's sync (its first region activity started %s) went before %s's first (%s), which was queued before it", urgent, name, starts[0])
	}
	for _, name := range all {
		for _, ev := range events(t, c, name) {
			if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil {
				require.NotEqual(t, enumspb.TIMEOUT_TYPE_HEARTBEAT, a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType(), "%s: an activity timed out while it ran", name)
				require.NotEqual(t, enumspb.TIMEOUT_TYPE_START_TO_CLOSE, a.GetFailure().GetTimeoutFailureInfo().GetTimeoutType(), "%s: an activity timed out while it ran", name)
			}
		}
	}
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
