package multiregion

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestRegionWorkerKilledMidSync: a control worker and two workers that both
// serve every region's queue. While a sync waits for a slow Deployment to
// become healthy, the worker running a region's Sync activity is killed
// with kill -9; the other worker finishes that region's sync. One
// operation, Succeeded; each Deployment created once.
func TestRegionWorkerKilledMidSync(t *testing.T) {
	e := newEnv(t)
	workers := startFailoverWorkers(t, e)
	const name = "failover"
	repo := e.NewRepo(t, name)
	repo.Write(map[string]string{"app/slow.yaml": e2etest.SlowDeployment("slow", 20), "app/next.yaml": e2etest.NextWave})
	sha := repo.CommitAndPush("a slow deployment")
	e.Apply(t, e2etest.App{Name: name, RepoURL: repo.URL, Path: "app", Namespace: name, Regions: regions})
	c := e.TemporalClient(t)
	e2etest.Eventually(t, 2*time.Minute, "first compare: OutOfSync", func() (bool, string) {
		v, err := e2etest.Query(c, name)
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Status == app.SyncStatusOutOfSync, e2etest.Describe(&v.Status)
	})

	syncDone := make(chan string, 1)
	go func() {
		out, err := e.Ferry(t, "app", "sync", name, "--wait")
		syncDone <- fmt.Sprintf("%v: %s", err, out)
	}()

	// Mid-sync: the Deployment exists in every region (the syncs wait for
	// its health before the next wave) and a region worker runs a Sync activity.
	uids := map[string]string{}
	var victim, survivor *e2etest.Worker
	var onVictim map[string]bool // activity IDs of the Syncs the victim runs
	e2etest.Eventually(t, 2*time.Minute, "the Deployment created everywhere, a Sync running on a region worker", func() (bool, string) {
		for _, r := range regions {
			d, err := e.KubeClient(t, r).AppsV1().Deployments(name).Get(context.Background(), "slow", metav1.GetOptions{})
			if err != nil {
				return false, r + ": " + err.Error()
			}
			uids[r] = string(d.UID)
		}
		running, err := runningActivities(c, contract.WorkflowID(name), contract.ActivitySync)
		if err != nil {
			return false, err.Error()
		}
		for i, w := range workers {
			onVictim = map[string]bool{}
			for id, identity := range running {
				if strings.HasPrefix(identity, w.Identity()) {
					onVictim[id] = true
				}
			}
			if len(onVictim) > 0 {
				victim, survivor = w, workers[1-i]
				return true, ""
			}
		}
		return false, fmt.Sprintf("running Sync activities: %v", running)
	})
	v, err := e2etest.Query(c, name)
	require.NoError(t, err)
	require.NotNil(t, v.Status.OperationState)
	require.Equal(t, app.OperationRunning, v.Status.OperationState.Phase, "killed in the middle of the sync")
	t.Logf("kill -9 worker %d, which runs Sync activities %v; worker %d goes on", victim.Pid(), keys(onVictim), survivor.Pid())
	victim.Kill9()

	select {
	case out := <-syncDone:
		require.Contains(t, out, "Succeeded", out)
	case <-time.After(4 * time.Minute):
		t.Fatal("the sync did not finish after one of the region workers was killed")
	}
	st := e.WaitApp(t, name, sha, 2*time.Minute)
	require.Equal(t, "1", st.OperationState.ID, "one operation")
	require.Equal(t, app.OperationSucceeded, st.OperationState.Phase)
	require.Len(t, st.History, 1)
	for _, r := range regions {
		d, err := e.KubeClient(t, r).AppsV1().Deployments(name).Get(context.Background(), "slow", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, uids[r], string(d.UID), "created once in %s", r)
	}

	// The workflow's history says who finished: each Sync the killed
	// worker ran completed on the other one, in a later attempt.
	finished, err := completedAttempts(c, contract.WorkflowID(name), contract.ActivitySync)
	require.NoError(t, err)
	require.Len(t, finished, len(regions), "one Sync activity per region: %+v", finished)
	for id := range onVictim {
		a, ok := finished[id]
		require.True(t, ok, "Sync activity %s completed: %+v", id, finished)
		require.True(t, strings.HasPrefix(a.identity, survivor.Identity()),
			"Sync activity %s (%s) finished by the surviving worker %d, not %s", id, a.region, survivor.Pid(), a.identity)
		require.Greater(t, a.attempt, int32(1), "Sync activity %s (%s) was retried after the kill", id, a.region)
		t.Logf("Sync in %s: started on worker %d, completed by %s in attempt %d", a.region, victim.Pid(), a.identity, a.attempt)
	}
	e.MustFerry(t, "app", "delete", name, "--cascade")
}

// runningActivities returns the identity of the worker running each
// started activity of the type, by activity ID.
func runningActivities(c client.Client, workflowID, activityType string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(ctx, workflowID, "")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, a := range desc.PendingActivities {
		if a.GetActivityType().GetName() == activityType && a.State == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			out[a.ActivityId] = a.LastWorkerIdentity
		}
	}
	return out, nil
}

type attempt struct {
	region   string
	identity string
	attempt  int32
	// lastTimeout is how the attempt before timed out, if it did.
	lastTimeout enumspb.TimeoutType
}

// completedAttempts reads the workflow's runs: for each completed
// activity of the type, by activity ID (a later run's wins: IDs begin
// again with each run), its region, the worker that completed it, in which
// attempt, and how the attempt before it timed out.
func completedAttempts(c client.Client, workflowID, activityType string) (map[string]attempt, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var scheduled map[int64]*history.ActivityTaskScheduledEventAttributes
	var started map[int64]*history.ActivityTaskStartedEventAttributes
	out := map[string]attempt{}
	err := ferryclient.EachEvent(ctx, c, workflowID, func(ev *history.HistoryEvent) error {
		switch {
		case ev.GetWorkflowExecutionStartedEventAttributes() != nil:
			scheduled = map[int64]*history.ActivityTaskScheduledEventAttributes{}
			started = map[int64]*history.ActivityTaskStartedEventAttributes{}
		case ev.GetActivityTaskScheduledEventAttributes() != nil:
			if a := ev.GetActivityTaskScheduledEventAttributes(); a.GetActivityType().GetName() == activityType {
				scheduled[ev.EventId] = a
			}
		case ev.GetActivityTaskStartedEventAttributes() != nil:
			started[ev.EventId] = ev.GetActivityTaskStartedEventAttributes()
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			done := ev.GetActivityTaskCompletedEventAttributes()
			s, ok := scheduled[done.ScheduledEventId]
			if !ok {
				return nil
			}
			var in struct{ Region string } // of SyncInput and CompareInput
			if err := converter.GetDefaultDataConverter().FromPayloads(s.Input, &in); err != nil {
				return err
			}
			st := started[done.StartedEventId]
			out[s.ActivityId] = attempt{region: in.Region, identity: st.GetIdentity(), attempt: st.GetAttempt(),
				lastTimeout: st.GetLastFailure().GetTimeoutFailureInfo().GetTimeoutType()}
		}
		return nil
	})
	return out, err
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
