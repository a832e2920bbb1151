package multiregion

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestFrozenRegionHoldsNoOneBack: one region's kube-apiserver is frozen
// with SIGSTOP (it accepts connections and answers nothing; its worker runs
// on). A new commit and a refresh: the two other regions are Synced at the
// new commit as fast as a refresh with every region healthy, give or take a
// second (issue 16: the operation waited 36 s, 45 s here, for the frozen
// region's compare; its figure, 2 s from the refresh, is logged), the frozen
// one shows Unreachable, and once thawed it catches up with nobody doing
// anything.
func TestFrozenRegionHoldsNoOneBack(t *testing.T) {
	e := newEnv(t)
	e.StartWorker(t, e.AllRoles()...)
	const name = "frozen"
	frozen, others := regions[1], []string{regions[0], regions[2]}
	repo := e.NewRepo(t, name)
	repo.Write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.CommitAndPush("v1")
	e.Apply(t, e2etest.App{Name: name, RepoURL: repo.URL, Path: "app", Namespace: name, Regions: regions, Automated: true, Poll: "1h"})
	e.WaitApp(t, name, sha1, 3*time.Minute)
	c := e.TemporalClient(t)

	// What a refresh costs on this machine now, with every region healthy.
	repo.Write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha2 := repo.CommitAndPush("v2")
	e.MustFerry(t, "app", "refresh", name)
	e.WaitApp(t, name, sha2, 2*time.Minute)
	healthy := timelineSince(t, c, contract.WorkflowID(name), contract.SignalRefresh)
	t.Logf("every region healthy, after the refresh signal: %s", healthy)

	thaw := freeze(t, frozen)
	repo.Write(map[string]string{"app/cm.yaml": configMap("settings", "v3")})
	sha3 := repo.CommitAndPush("v3")
	e.MustFerry(t, "app", "refresh", name)
	refreshed := time.Now()

	var view contract.View
	e2etest.Eventually(t, 2*time.Minute, "the other regions Synced at v3 while "+frozen+" is frozen", func() (bool, string) {
		require.NoError(t, json.Unmarshal([]byte(e.MustFerry(t, "app", "get", name, "-o", "json")), &view))
		ok := true
		for _, r := range others {
			sum := view.Status.Regions[r]
			ok = ok && sum.Sync == app.SyncStatusSynced && sum.Revision == sha3 && sum.SyncedRevision == sha3
		}
		return ok, e2etest.Describe(&view.Status)
	})
	t.Logf("%s after the refresh: %s", time.Since(refreshed).Round(10*time.Millisecond), e2etest.Describe(&view.Status))
	for _, r := range others {
		cm, err := e.KubeClient(t, r).CoreV1().ConfigMaps(name).Get(context.Background(), "settings", metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "v3", cm.Data["version"], "region %s", r)
	}
	// Read from the workflow's history while the region is still frozen:
	// the other regions' Syncs completed while the frozen region's compare
	// had not ended at all (neither answered, failed nor timed out), so
	// they waited for nothing of it. Without this, they synced only once
	// its request had timed out. The figures the issue names (from the
	// refresh signal to each Sync's end, and how long after the last
	// compare each Sync began, beside the same refresh with every region
	// healthy) are logged: speed is the benchmarks' to assert.
	tl := timelineSince(t, c, contract.WorkflowID(name), contract.SignalRefresh)
	t.Logf("%s frozen, after the refresh signal: %s", frozen, tl)
	for _, r := range others {
		require.Contains(t, tl.synced, r, "a Sync of %s completed after the refresh", r)
		t.Logf("%s: synced %s after the refresh signal (every region healthy: %s), its sync began %s after the last compare (healthy: %s)", r,
			tl.synced[r].Sub(tl.signaled).Round(time.Millisecond), healthy.synced[r].Sub(healthy.signaled).Round(time.Millisecond),
			tl.heldBack(r, others).Round(time.Millisecond), healthy.heldBack(r, others).Round(time.Millisecond))
	}
	require.NotContains(t, tl.compareEnded, frozen, "the other regions synced while the frozen region's compare had not ended: %s", tl)
	require.NotContains(t, tl.synced, frozen, "no Sync of the frozen region went through")

	// What a user sees: the frozen region's row says Unreachable, the
	// others Synced.
	e2etest.Eventually(t, 2*time.Minute, frozen+" shown Unreachable", func() (bool, string) {
		require.NoError(t, json.Unmarshal([]byte(e.MustFerry(t, "app", "get", name, "-o", "json")), &view))
		return view.Status.Regions[frozen].Unreachable, e2etest.Describe(&view.Status)
	})
	sum := view.Status.Regions[frozen]
	require.Contains(t, sum.Message, "Unreachable", "the reason")
	t.Logf("status.regions[%s]: %s/%s: %s", frozen, sum.Sync, sum.Health, sum.Message)
	table := e.MustFerry(t, "app", "get", name)
	require.Contains(t, rowOf(table, frozen), "Unreachable", "ferry app get:\n%s", table)
	for _, r := range others {
		require.Contains(t, rowOf(table, r), "Synced", "ferry app get:\n%s", table)
	}

	thaw()
	st := e.WaitApp(t, name, sha3, 3*time.Minute)
	require.False(t, st.Regions[frozen].Unreachable)
	cm, err := e.KubeClient(t, frozen).CoreV1().ConfigMaps(name).Get(context.Background(), "settings", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "v3", cm.Data["version"], "region %s caught up", frozen)
	e.RecordHistories(t, contract.WorkflowID(name), name)
	e.MustFerry(t, "app", "delete", name, "--cascade")
}

// timeline is when things happened in a workflow after a signal, by region.
type timeline struct {
	signaled, rendered              time.Time
	compared, syncScheduled, synced map[string]time.Time
	// compareEnded: a region's compare answered, failed or timed out.
	compareEnded map[string]time.Time
}

func (tl timeline) since(m map[string]time.Time) map[string]time.Duration {
	out := map[string]time.Duration{}
	for r, at := range m {
		out[r] = at.Sub(tl.signaled).Round(time.Millisecond)
	}
	return out
}

func (tl timeline) String() string {
	return fmt.Sprintf("render done %s; compares done %v; syncs scheduled %v, done %v", tl.rendered.Sub(tl.signaled).Round(time.Millisecond),
		tl.since(tl.compared), tl.since(tl.syncScheduled), tl.since(tl.synced))
}

// heldBack is how long after the last of the regions' compares region's
// Sync was scheduled.
func (tl timeline) heldBack(region string, regions []string) time.Duration {
	var last time.Time
	for _, r := range regions {
		if tl.compared[r].After(last) {
			last = tl.compared[r]
		}
	}
	return tl.syncScheduled[region].Sub(last)
}

// timelineSince reads the workflow's history from the last signal of the
// name on: the first completed Render, and each region's first completed
// Compare, first scheduled and first completed Sync.
func timelineSince(t *testing.T, c client.Client, workflowID, signal string) timeline {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var tl timeline
	type scheduled struct{ activity, region string }
	byID := map[int64]scheduled{}
	first := func(m map[string]time.Time, region string, at time.Time) {
		if _, seen := m[region]; !seen {
			m[region] = at
		}
	}
	require.NoError(t, ferryclient.EachEvent(ctx, c, workflowID, func(ev *historypb.HistoryEvent) error {
		at := ev.GetEventTime().AsTime()
		if ev.GetWorkflowExecutionStartedEventAttributes() != nil {
			byID = map[int64]scheduled{} // event IDs begin again with each run
		}
		if ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == signal {
			tl = timeline{signaled: at, compared: map[string]time.Time{}, syncScheduled: map[string]time.Time{}, synced: map[string]time.Time{},
				compareEnded: map[string]time.Time{}}
			return nil
		}
		if tl.signaled.IsZero() {
			return nil
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			var in struct{ Region string } // of SyncInput and CompareInput
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in))
			byID[ev.EventId] = scheduled{a.GetActivityType().GetName(), in.Region}
			if a.GetActivityType().GetName() == contract.ActivitySync {
				first(tl.syncScheduled, in.Region, at)
			}
		}
		for _, id := range []int64{ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId(), ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId(),
			ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()} {
			if s := byID[id]; id != 0 && s.activity == contract.ActivityCompare {
				first(tl.compareEnded, s.region, at)
			}
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
			switch s := byID[a.GetScheduledEventId()]; s.activity {
			case contract.ActivityRender:
				if tl.rendered.IsZero() {
					tl.rendered = at
				}
			case contract.ActivityCompare:
				first(tl.compared, s.region, at)
			case contract.ActivitySync:
				first(tl.synced, s.region, at)
			}
		}
		return nil
	}))
	require.False(t, tl.signaled.IsZero(), "a %s signal in the history", signal)
	return tl
}
