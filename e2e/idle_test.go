package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

// gaugeCRD is a custom resource with a status subresource that no
// controller writes: its health is its Ready and Stalled conditions, so a
// status patch is a change of health alone.
const gaugeCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gauges.example.com
spec:
  group: example.com
  names: {kind: Gauge, plural: gauges, singular: gauge}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

const gauge = "apiVersion: example.com/v1\nkind: Gauge\nmetadata:\n  name: meter\nspec:\n  unit: bar\n"

// pollCycle is one poll of an app: from its poll timer firing to the next.
type pollCycle struct {
	firedAt  int64 // the TimerFired event
	compared bool  // a Compare was scheduled in it
	signals  []contract.RefreshRequest
}

// pollCycles cuts the history into poll cycles, from the first poll timer
// that fires at index from or after (eventsSoFar).
func pollCycles(t *testing.T, history []*historypb.HistoryEvent, from int) []pollCycle {
	t.Helper()
	polls := map[int64]bool{}
	var out []pollCycle
	for i, ev := range history {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			clear(polls) // a run's event IDs are its own
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			polls[ev.GetEventId()] = strings.HasPrefix(summaryOf(t, ev), "next poll")
		case enumspb.EVENT_TYPE_TIMER_FIRED:
			if polls[ev.GetTimerFiredEventAttributes().GetStartedEventId()] && i >= from {
				out = append(out, pollCycle{firedAt: ev.GetEventId()})
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if len(out) > 0 && ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == contract.ActivityCompare {
				out[len(out)-1].compared = true
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if len(out) > 0 {
				out[len(out)-1].signals = append(out[len(out)-1].signals, signalOf(t, ev))
			}
		}
	}
	return out
}

func signalOf(t *testing.T, ev *historypb.HistoryEvent) contract.RefreshRequest {
	t.Helper()
	var req contract.RefreshRequest
	attrs := ev.GetWorkflowExecutionSignaledEventAttributes()
	if attrs.GetSignalName() == contract.SignalRefresh {
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), &req))
	}
	return req
}

// skippedRuns are the lengths of the runs of polls without a compare or a
// signal, and the cycles as a string (c: compared, s: signalled, .: skipped).
func skippedRuns(cycles []pollCycle) ([]int, string) {
	var runs []int
	var b strings.Builder
	run := 0
	for _, c := range cycles {
		switch {
		case len(c.signals) > 0:
			b.WriteByte('s')
		case c.compared:
			b.WriteByte('c')
		default:
			b.WriteByte('.')
			run++
			continue
		}
		if run > 0 {
			runs = append(runs, run)
		}
		run = 0
	}
	if run > 0 {
		runs = append(runs, run)
	}
	return runs, b.String()
}

// eventsSoFar is how many events the app's runs have, first to latest
// (events): an event at that index or after came later. Not an event ID:
// IDs begin again in each run, and a new app's first run continues as new
// once it has onboarded.
func eventsSoFar(t *testing.T, name string) int {
	return len(events(t, temporalClient(t), name))
}

// waitDriftSignal waits for a refresh signal at index from or after
// (eventsSoFar) whose drift By names by, and a Compare after it.
func waitDriftSignal(t *testing.T, name string, from int, by string) {
	t.Helper()
	c := temporalClient(t)
	eventually(t, 2*time.Minute, "a drift signal by "+by+" and a compare after it", func() (bool, string) {
		signalled := false
		for i, ev := range events(t, c, name) {
			switch {
			case i < from:
			case ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
				if d := signalOf(t, ev).Drift; d != nil && slices.Contains(d.By, by) {
					signalled = true
				}
			case signalled && ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
				ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == contract.ActivityCompare:
				return true, ""
			}
		}
		return false, fmt.Sprintf("signalled: %t", signalled)
	})
}

// TestIdleAppSkipsCompareUntilSomethingChanges: an idle app whose regions'
// live caches watch it resolves on its polls without comparing, but
// compares every --full-compare-every-th poll; a change of health alone (a
// status patch that stalls a custom resource) and an edit of a managed
// object each reach it as a signal and are compared at once.
func TestIdleAppSkipsCompareUntilSomethingChanges(t *testing.T) {
	const every = 4
	startWorker(t, "--full-compare-every", fmt.Sprint(every))
	c := temporalClient(t)
	repo := newRepo(t, "idle")
	repo.write(map[string]string{"app/crd.yaml": gaugeCRD, "app/gauge.yaml": gauge, "app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	const name = "idle"
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, true, "5s")))
	waitApp(t, name, sha, 3*time.Minute)
	synced := eventsSoFar(t, name)

	var cycles string
	full := "c" + strings.Repeat(".", every-1) + "c"
	eventually(t, 5*time.Minute, fmt.Sprintf("%d polls in a row without a compare, then one that compares", every-1), func() (bool, string) {
		_, s := skippedRuns(pollCycles(t, events(t, c, name), synced))
		cycles = s
		return strings.Contains(s, full), s
	})
	runs, _ := skippedRuns(pollCycles(t, events(t, c, name), synced))
	t.Logf("polls since the sync (c compared, . skipped, s signalled): %s", cycles)
	for _, n := range runs {
		assert.LessOrEqual(t, n, every-1, "every %dth poll compares: %s", every, cycles)
	}

	region := regions[0]
	before := eventsSoFar(t, name)
	kubectl(t, region, "-n", name, "patch", "gauge/meter", "--subresource=status", "--type=merge",
		"-p", `{"status":{"conditions":[{"type":"Stalled","status":"True","reason":"Jammed","message":"the needle is stuck"}]}}`)
	waitDriftSignal(t, name, before, "health")
	eventually(t, time.Minute, "the app Degraded by the stalled gauge", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		for _, r := range v.Status.Resources {
			if r.Kind == "Gauge" && r.Region == region && r.Health == app.HealthDegraded {
				return v.Status.Health.Status == app.HealthDegraded, e2etest.Describe(&v.Status)
			}
		}
		return false, e2etest.Describe(&v.Status)
	})

	before = eventsSoFar(t, name)
	kubectl(t, region, "-n", name, "patch", "configmap/settings", "--type=merge", "-p", `{"data":{"version":"hand-made"}}`)
	waitDriftSignal(t, name, before, "kubectl-patch")
	eventually(t, time.Minute, "selfHeal puts the edit back", func() (bool, string) {
		got := kubectl(t, region, "-n", name, "get", "configmap/settings", "-o", "jsonpath={.data.version}")
		return got == "v1", got
	})
	recordHistories(t, name)
	mustFerry(t, "app", "delete", name, "--cascade")
}

// TestIdleAppComparesAfterRegionWorkerRestart: a region worker that
// restarts has a live cache that knows nothing of the app; the control
// worker sees another worker on the region's queue and the app's next poll
// compares, with no signal and no safety interval to make it.
func TestIdleAppComparesAfterRegionWorkerRestart(t *testing.T) {
	startWorkerWith(t, "--control", "--full-compare-every", "1000")
	var regionRoles []string
	for _, r := range regions {
		regionRoles = append(regionRoles, "--region", r)
	}
	first := startWorkerWith(t, regionRoles...)
	c := temporalClient(t)
	repo := newRepo(t, "idle-restart")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	const name = "idle-restart"
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, true, "5s")))
	waitApp(t, name, sha, 3*time.Minute)
	synced := eventsSoFar(t, name)
	eventually(t, 5*time.Minute, "polls without a compare", func() (bool, string) {
		runs, s := skippedRuns(pollCycles(t, events(t, c, name), synced))
		return slices.ContainsFunc(runs, func(n int) bool { return n >= 3 }), s
	})

	first.stop()
	startWorkerWith(t, regionRoles...)
	restarted := eventsSoFar(t, name)
	var cycles string
	eventually(t, 8*time.Minute, "a poll that compares after the region worker restarted", func() (bool, string) {
		all := pollCycles(t, events(t, c, name), restarted)
		_, cycles = skippedRuns(all)
		for _, cy := range all {
			if cy.compared && len(cy.signals) == 0 {
				return true, cycles
			}
		}
		return false, cycles
	})
	t.Logf("polls since the restart (c compared, . skipped, s signalled): %s", cycles)
	recordHistories(t, name)
	mustFerry(t, "app", "delete", name, "--cascade")
}
