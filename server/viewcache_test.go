package main

import (
	"context"
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestViewCache: a list reuses an app's view only while its search
// attributes are unchanged, no operation runs, the server did not change
// it, and the view is young; the last view stays for viewKeep.
func TestViewCache(t *testing.T) {
	var c viewCache
	v := &contract.View{}
	synced := contract.Summary{Sync: "Synced", Health: "Healthy", Revision: "abc", Operation: "Succeeded"}
	c.put("web", synced, v, time.Now())
	assert.Same(t, v, c.get("web", synced), "unchanged attributes: the cached view")

	moved := synced
	moved.Sync = "OutOfSync"
	assert.Nil(t, c.get("web", moved), "moved attributes: queried again")
	running := synced
	running.Operation = "Running"
	c.put("web", running, v, time.Now())
	assert.Nil(t, c.get("web", running), "a running operation: queried again")

	c.put("web", synced, v, time.Now())
	c.forget("web")
	assert.Nil(t, c.get("web", synced), "after the server changed it: queried again")
	assert.Same(t, v, c.last("web"), "but it is still the app's last view")

	c.put("web", synced, v, time.Now())
	c.m["web"] = cachedView{v: v, sum: synced, at: time.Now().Add(-viewMaxAge - time.Second)}
	assert.Nil(t, c.get("web", synced), "an old view: queried again")
	assert.Same(t, v, c.last("web"))
	c.m["web"] = cachedView{v: v, sum: synced, at: time.Now().Add(-viewKeep - time.Second)}
	c.swept = time.Time{} // the sweep runs once per viewMaxAge
	c.put("other", synced, v, time.Now())
	assert.NotContains(t, c.m, "web", "views older than viewKeep are dropped, those of deleted apps too")
}

// TestListDoesNotWaitForBusyWorkflows: a list answers although some apps'
// queries do not (their worker is busy): such an app is its last view, or
// its search attributes when it has none; a deleted app is left out. The
// query runs on, and its answer serves the next list.
func TestListDoesNotWaitForBusyWorkflows(t *testing.T) {
	f := &fleet{sums: map[string]contract.Summary{}, msgs: map[string]string{}, failing: map[string]bool{}, hold: map[string]chan struct{}{}}
	s := &server{log: slog.New(slog.DiscardHandler), queryApp: f.query}
	for _, name := range []string{"quick", "seen", "never"} {
		f.set(name, "Healthy", "Synced")
	}
	sums := func() map[string]contract.Summary {
		f.mu.Lock()
		defer f.mu.Unlock()
		return maps.Clone(f.sums)
	}
	names := []string{"quick", "seen", "never"}
	first := s.views(context.Background(), names[:2], sums())
	require.Len(t, first, 2)
	require.NotNil(t, first[1])

	// seen's status moves, then its workflow and never's stop answering.
	f.set("seen", "Degraded", "OutOfSync")
	f.sums["never"] = contract.Summary{Sync: "OutOfSync", Health: "Progressing", Project: "team", RepoURL: "https://git.example.com/never.git", Regions: []string{"eu-west-1"}}
	release := make(chan struct{})
	f.hold["seen"], f.hold["never"] = release, release
	got := s.views(context.Background(), names, sums())
	require.Len(t, got, 3)
	assert.Same(t, first[0], got[0], "quick's cached view stands")
	assert.Same(t, first[1], got[1], "seen did not answer: its last view")
	assert.Equal(t, app.HealthStatusCode("Healthy"), got[1].Status.Health.Status)
	never := got[2]
	assert.Equal(t, "never", never.Metadata.Name)
	assert.Equal(t, "team", never.Spec.Project)
	assert.Equal(t, "https://git.example.com/never.git", never.Spec.Source.RepoURL)
	assert.Equal(t, app.SyncStatusCode("OutOfSync"), never.Status.Sync.Status, "never queried: its search attributes")
	assert.Equal(t, app.HealthStatusCode("Progressing"), never.Status.Health.Status)
	assert.Contains(t, never.Status.Regions, "eu-west-1")

	close(release)
	require.Eventually(t, func() bool { return s.cache.get("seen", sums()["seen"]) != nil }, time.Minute, 10*time.Millisecond,
		"the late answer is kept")
	got = s.views(context.Background(), names, sums())
	assert.Equal(t, app.HealthStatusCode("Degraded"), got[1].Status.Health.Status, "the next list has it")

	// quick is deleted between the listing and its query: left out.
	listed := sums()
	f.mu.Lock()
	delete(f.sums, "quick")
	f.mu.Unlock()
	s.cache.forget("quick")
	got = s.views(context.Background(), names, listed)
	assert.Nil(t, got[0], "an app gone meanwhile is not listed")
	assert.NotNil(t, got[1])
}

// TestViewAskedBeforeAChangeDoesNotStandForTheApp: a query asked before
// the server changed the app (a delete) that answers after is only the
// app's last view, and a query asked after the change shares no answer
// with it: a list right after a delete does not show the deleted app.
func TestViewAskedBeforeAChangeDoesNotStandForTheApp(t *testing.T) {
	var c viewCache
	v := &contract.View{}
	synced := contract.Summary{Sync: "Synced", Health: "Healthy", Revision: "abc", Operation: "Succeeded"}
	c.put("web", synced, v, time.Now()) // queried before
	before := c.flightKey("web")
	asked := time.Now()
	c.forget("web") // the app's delete, while the query runs
	c.put("web", synced, v, asked)
	assert.Nil(t, c.get("web", synced), "asked before the delete: not the app as it is")
	assert.Same(t, v, c.last("web"))
	assert.NotEqual(t, before, c.flightKey("web"), "a query asked now does not join the one in flight")

	c.put("web", synced, v, time.Now())
	assert.Same(t, v, c.get("web", synced), "asked after the change: the app as it is")

	c.forgot["old"] = time.Now().Add(-forgetHold - time.Second)
	c.forget("web")
	assert.NotContains(t, c.forgot, "old", "a change is remembered for forgetHold only")
	c.forget("no-such-app")
	assert.NotContains(t, c.forgot, "no-such-app", "a name never queried is not remembered")
}
