package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
)

// gateView asks the onboarding gate how full it is; ok is false while no
// gate runs.
func gateView(t *testing.T, c client.Client) (contract.OnboardGateView, bool) {
	t.Helper()
	res, err := c.QueryWorkflow(context.Background(), contract.OnboardGateID, "", contract.QueryStatus)
	if err != nil {
		return contract.OnboardGateView{}, false
	}
	var v contract.OnboardGateView
	require.NoError(t, res.Get(&v))
	return v, true
}

// gateEmpty waits until no app holds a place at the onboarding gate: a
// place another test's app left (killed in its first sync) frees itself
// within the gate's lease.
func gateEmpty(t *testing.T, c client.Client) {
	t.Helper()
	eventually(t, 11*time.Minute, "the onboarding gate empty", func() (bool, string) {
		v, ok := gateView(t, c)
		return !ok || v.Admitted == 0, fmt.Sprint(v)
	})
}

// holdPlace takes a place at the onboarding gate of the given capacity for
// a workflow of the test's that no worker runs, as an app in its first
// sync holds one; release gives it back.
func holdPlace(t *testing.T, c client.Client, capacity int) (release func()) {
	t.Helper()
	ctx := context.Background()
	id := fmt.Sprintf("e2e-onboard-holder-%d", time.Now().UnixNano())
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: "e2e-no-worker"}, "PlaceHolder")
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), id, "", "the test ended") })
	want := contract.OnboardRequest{App: id, Capacity: capacity}
	_, err = c.SignalWithStartWorkflow(ctx, contract.OnboardGateID, contract.SignalOnboardWant, want,
		client.StartWorkflowOptions{ID: contract.OnboardGateID, TaskQueue: contract.TaskQueue},
		contract.OnboardGateWorkflow, contract.OnboardGateState{Capacity: capacity})
	require.NoError(t, err)
	eventually(t, time.Minute, "the test's place taken", func() (bool, string) {
		v, ok := gateView(t, c)
		return ok && v.Admitted == 1, fmt.Sprint(v)
	})
	return func() {
		t.Helper()
		require.NoError(t, c.SignalWorkflow(ctx, contract.OnboardGateID, "", contract.SignalOnboardDone, contract.OnboardRequest{App: id}))
	}
}

// onboardTurn is when an app's turn came and when it said it was done.
type onboardTurn struct {
	app       string
	came, end time.Time
}

// asks counts an app's asks of the gate: the OnboardWant local activities
// of its history.
func asks(t *testing.T, c client.Client, name string) int {
	t.Helper()
	n := 0
	for _, ev := range events(t, c, name) {
		if m := ev.GetMarkerRecordedEventAttributes(); m.GetMarkerName() == "LocalActivity" &&
			strings.Contains(string(m.GetDetails()["data"].GetPayloads()[0].GetData()), `"`+contract.ActivityOnboardWant+`"`) {
			n++
		}
	}
	return n
}

// turnOf reads an app's turn from its history.
func turnOf(t *testing.T, c client.Client, name string) onboardTurn {
	t.Helper()
	turn := onboardTurn{app: name}
	for _, ev := range events(t, c, name) {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == contract.SignalOnboardGo {
				turn.came = ev.GetEventTime().AsTime()
			}
		case enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
			if ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes().GetSignalName() == contract.SignalOnboardDone {
				turn.end = ev.GetEventTime().AsTime()
			}
		}
	}
	require.False(t, turn.came.IsZero(), "%s: its turn came (signal %s)", name, contract.SignalOnboardGo)
	require.False(t, turn.end.IsZero(), "%s: it said it was done (signal %s)", name, contract.SignalOnboardDone)
	return turn
}

// TestNewAppsTakeTurnsToOnboard: with --onboard-concurrency 1, three new
// automated apps applied at once each wait for their turn: their first
// syncs never overlap, every app ends Synced and Healthy, and the gate
// ends empty. With --onboard-wait 200ms, and the place held by the test
// until every app has asked twice, their waits end before their turns:
// each asks again and keeps its place. (Without the held place, whether
// the last app's wait ended first was a race between two first syncs and
// Temporal's timer, which fires a short timer up to a second late.)
func TestNewAppsTakeTurnsToOnboard(t *testing.T) {
	startWorker(t, "--onboard-concurrency", "1", "--onboard-wait", "200ms")
	c := temporalClient(t)
	gateEmpty(t, c)
	release := holdPlace(t, c, 1)
	repo := newRepo(t, "turns")
	repo.write(map[string]string{"app/web.yaml": onboardDeployment, "app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	names := []string{"turns-a", "turns-b", "turns-c"}
	files := map[string]string{}
	for _, n := range names {
		files[n+".yaml"] = oneRegionApp(n, repo.URL, "app", regions[0], true)
	}
	mustFerry(t, "app", "apply", "-f", writeDir(t, files), "--parallel", "3")
	t.Cleanup(func() {
		for _, n := range names {
			_, _ = ferry(t, "app", "delete", n, "--cascade")
		}
	})
	eventually(t, time.Minute, "every app asked again while the place was held", func() (bool, string) {
		for _, n := range names {
			if a := asks(t, c, n); a < 2 {
				return false, fmt.Sprintf("%s asked %d times", n, a)
			}
		}
		return true, ""
	})
	release()
	for _, n := range names {
		mustFerry(t, "app", "wait", n, "--sync", "--health", "--timeout", "3m")
		v, err := queryView(t, c, n)
		require.NoError(t, err)
		require.Equal(t, sha, v.Status.Sync.Revision, n)
	}

	var turns []onboardTurn
	for _, n := range names {
		turns = append(turns, turnOf(t, c, n))
	}
	sort.Slice(turns, func(i, j int) bool { return turns[i].came.Before(turns[j].came) })
	for i := 1; i < len(turns); i++ {
		require.False(t, turns[i].came.Before(turns[i-1].end),
			"one app at a time: %s's turn came at %s, before %s was done at %s", turns[i].app, turns[i].came, turns[i-1].app, turns[i-1].end)
	}
	last := turns[len(turns)-1]
	require.GreaterOrEqual(t, asks(t, c, last.app), 2, "%s waited longer than --onboard-wait and asked again", last.app)
	eventually(t, time.Minute, "the gate empty again", func() (bool, string) {
		v, ok := gateView(t, c)
		return ok && v == contract.OnboardGateView{Capacity: 1}, fmt.Sprint(v)
	})
	recordWorkflowHistories(t, contract.WorkflowID(turns[len(turns)-1].app), "onboard-turn")
	recordWorkflowHistories(t, contract.OnboardGateID, "onboard-gate")
}
