package multiregion

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
)

// TestRegionWorkerKilledMidCompare: a region's API server hangs (frozen,
// not down), so the Compare that a new commit starts there hangs too. The
// worker running it is killed with kill -9 and the API server thawed: the
// other worker compares the region once the Compare's heartbeat stops, not
// after its five-minute limit, and the new commit reaches every region.
func TestRegionWorkerKilledMidCompare(t *testing.T) {
	e := newEnv(t)
	workers := startFailoverWorkers(t, e)
	const name = "comparefail"
	repo := e.NewRepo(t, name)
	repo.Write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.CommitAndPush("version 1")
	e.Apply(t, e2etest.App{Name: name, RepoURL: repo.URL, Path: "app", Namespace: name, Regions: regions, Automated: true, Poll: "1h"})
	e.WaitApp(t, name, sha1, 2*time.Minute)

	frozen := regions[1]
	thaw := freeze(t, frozen)
	repo.Write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha2 := repo.CommitAndPush("version 2")
	e.MustFerry(t, "app", "refresh", name)

	// The other regions' Compares end at once; the frozen region's stays.
	c := e.TemporalClient(t)
	var victim, survivor *e2etest.Worker
	var hung string
	e2etest.Eventually(t, time.Minute, "one Compare left running, on a region worker", func() (bool, string) {
		running, err := runningActivities(c, contract.WorkflowID(name), contract.ActivityCompare)
		if err != nil || len(running) != 1 {
			return false, fmt.Sprintf("running Compares: %v %v", running, err)
		}
		for id, identity := range running {
			if id != hung { // the same one twice, a second apart
				hung = id
				return false, "once more"
			}
			for i, w := range workers {
				if strings.HasPrefix(identity, w.Identity()) {
					victim, survivor = w, workers[1-i]
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("running Compares: %v", running)
	})
	t.Logf("kill -9 worker %d, which runs Compare %s; thaw the API server of %s", victim.Pid(), hung, frozen)
	victim.Kill9()
	thaw()

	e.WaitApp(t, name, sha2, 2*time.Minute)
	attempts, err := completedAttempts(c, contract.WorkflowID(name), contract.ActivityCompare)
	require.NoError(t, err)
	a, ok := attempts[hung]
	require.True(t, ok, "Compare %s completed: %+v", hung, attempts)
	require.Equal(t, frozen, a.region)
	require.Greater(t, a.attempt, int32(1), "retried after the kill")
	require.Equal(t, enumspb.TIMEOUT_TYPE_HEARTBEAT, a.lastTimeout, "the killed attempt timed out on its heartbeat")
	require.True(t, strings.HasPrefix(a.identity, survivor.Identity()), "completed by the surviving worker %d, not %s", survivor.Pid(), a.identity)
	e.MustFerry(t, "app", "delete", name, "--cascade")
}
