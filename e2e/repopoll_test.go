package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
)

// TestRepoPollRefreshesAnAppOfALongPoll: a control worker that lists the
// apps' repositories every 2 s (--repo-poll-interval) syncs a new commit
// of an app whose own poll is 3 minutes within seconds, with no webhook
// and no refresh: a refresh signal carrying the push of main from the old
// commit to the new. The app's own poll timer waits for its safety
// compare (--full-compare-interval, 30 minutes).
func TestRepoPollRefreshesAnAppOfALongPoll(t *testing.T) {
	startWorker(t, "--repo-poll-interval", "2s")
	c := temporalClient(t)
	repo := newRepo(t, "repopoll")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.commitAndPush("v1")
	const name = "repopoll"
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML(name, repo.URL, "app", name, true, "3m")))
	waitApp(t, name, sha1, 3*time.Minute)

	eventually(t, time.Minute, "the app's poll timer set for its safety compare", func() (bool, string) {
		var last string
		for _, ev := range events(t, c, name) {
			if ev.GetEventType() != enumspb.EVENT_TYPE_TIMER_STARTED || !strings.HasPrefix(summaryOf(t, ev), "next poll") {
				continue
			}
			last = summaryOf(t, ev) + " " + ev.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration().String()
			if strings.Contains(last, "safety compare") && ev.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration() >= 30*time.Minute {
				return true, last
			}
		}
		return false, "last poll timer: " + last
	})

	// After the worker's first listing of the repository (its list of
	// the apps is at most 10 s old, and it lists every 2 s), so that the
	// push is a change to what it listed.
	time.Sleep(15 * time.Second)
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha2 := repo.commitAndPush("v2")
	start := time.Now()
	t.Logf("push → Synced at %s in %d regions: %s", short(sha2), len(regions), waitSynced(t, c, name, sha2, start))
	for _, r := range regions {
		assert.Equal(t, "v2", configMapVersion(t, r, name, "settings"), "region %s", r)
	}
	var pushes []string
	for _, ev := range events(t, c, name) {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED {
			if p := signalOf(t, ev).Push; p != nil {
				pushes = append(pushes, p.Ref+" "+short(p.Before)+" → "+short(p.After))
			}
		}
	}
	require.Equal(t, []string{"refs/heads/main " + short(sha1) + " → " + short(sha2)}, pushes, "the pushes the app was signalled")
	recordHistories(t, name)
	mustFerry(t, "app", "delete", name, "--cascade")
}
