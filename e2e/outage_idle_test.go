package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestIdleAppSeesItsRegionStopAnswering: an app that polls once an hour
// sits idle; one region's kube-apiserver is frozen (SIGSTOP: it accepts
// connections and answers nothing; its worker runs on). The region worker's
// live cache notices that its API server no longer answers and signals the
// app, which shows the region Unreachable within minutes, long before its
// next poll or full compare. Thawed, the region is signalled again and
// shows Synced once more, with nobody doing anything.
func TestIdleAppSeesItsRegionStopAnswering(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	repo := newRepo(t, "quiet")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	const name = "quiet"
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, true, "1h")))
	waitApp(t, name, sha, 3*time.Minute)

	frozen := regions[1]
	require.NoError(t, stack.FreezeAPIServer(frozen))
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			require.NoError(t, stack.ThawAPIServer(frozen))
		}
	}
	t.Cleanup(thaw)
	before := eventsSoFar(t, name)
	eventually(t, 3*time.Minute, frozen+" shown Unreachable", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Regions[frozen].Unreachable, e2etest.Describe(&v.Status)
	})
	signalled := false
	for i, ev := range events(t, c, name) {
		if i >= before && ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED {
			if d := signalOf(t, ev).Drift; d != nil && d.Region == frozen && slices.Contains(d.By, "unreachable") {
				signalled = true
			}
		}
	}
	require.True(t, signalled, "the region worker signalled the app that %s does not answer", frozen)
	v, err := queryView(t, c, name)
	require.NoError(t, err)
	require.Equal(t, app.SyncStatusSynced, v.Status.Regions[regions[0]].Sync, "the other region is as it was")

	thaw()
	eventually(t, 3*time.Minute, frozen+" Synced again", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		sum := v.Status.Regions[frozen]
		return !sum.Unreachable && sum.Sync == app.SyncStatusSynced, e2etest.Describe(&v.Status)
	})
	recordHistories(t, name)
	mustFerry(t, "app", "delete", name, "--cascade")
}
