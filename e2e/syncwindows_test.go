package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func windowsProjectYAML(repoURL, windows string) string {
	p := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: team-w
spec:
  sourceRepos: [%s]
  destinations:
  - {name: us-east-1, namespace: team-w}
  clusterResourceWhitelist: [{group: "", kind: Namespace}]
`, repoURL)
	if windows != "" {
		p += "  syncWindows:\n" + windows
	}
	return p
}

// denyWindowNow is a deny window for app windowed that opened at the
// current minute of the time zone and stays open for at least a minute and
// a half more (two minutes, or three late in the minute); it returns the
// window and when it closes.
func denyWindowNow(zone string, manualSync bool) (string, time.Time) {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		panic(err)
	}
	now := time.Now().In(loc)
	start := now.Truncate(time.Minute)
	minutes := 2
	if now.Sub(start) > 30*time.Second {
		minutes = 3
	}
	w := fmt.Sprintf("  - {kind: deny, schedule: '%d %d * * *', duration: %dm, timeZone: %s, applications: [windowed], manualSync: %t}\n",
		start.Minute(), start.Hour(), minutes, zone, manualSync)
	return w, start.Add(time.Duration(minutes) * time.Minute).UTC()
}

// TestSyncWindowHoldsAutoSync: a deny window of two minutes is active now.
// An automated sync of a new commit waits; ferry app get names the window;
// a manual sync is refused, by the CLI and by the workflow's sync update;
// the sync happens when the window closes, though the app polls only
// hourly and nobody refreshes it. In a window with manualSync: true, a
// manual sync runs.
func TestSyncWindowHoldsAutoSync(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	cs := kubeClient(t, "us-east-1")
	repo := newRepo(t, "windowed")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha1 := repo.commitAndPush("v1")
	mustFerry(t, "project", "apply", "-f", writeFile(t, windowsProjectYAML(repo.URL, "")))
	mustFerry(t, "app", "apply", "-f", writeFile(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: windowed
spec:
  project: team-w
  pollInterval: 1h
  source: {repoURL: %s, targetRevision: main, path: app}
  destination: {name: us-east-1, namespace: team-w}
  syncPolicy:
    automated: {prune: true}
    syncOptions: [CreateNamespace=true]
`, repo.URL)))
	version := func() string {
		cm, err := cs.CoreV1().ConfigMaps("team-w").Get(context.Background(), "settings", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return cm.Data["version"]
	}
	eventually(t, 2*time.Minute, "v1 synced with no window", func() (bool, string) {
		v, err := queryView(t, c, "windowed")
		return err == nil && v.Status.Sync.Revision == sha1 && version() == "v1", fmt.Sprint(err, " ", version())
	})

	window, closes := denyWindowNow("Asia/Kolkata", false)
	mustFerry(t, "project", "apply", "-f", writeFile(t, windowsProjectYAML(repo.URL, window)))
	out := mustFerry(t, "project", "windows", "team-w")
	t.Log(out)
	row := strings.Fields(strings.Split(strings.TrimSpace(out), "\n")[1])
	require.Equal(t, []string{"0", "deny"}, row[:2])
	require.Equal(t, []string{"Asia/Kolkata", "windowed", "-", "-", "false", "true"}, row[8:14], "active now")
	require.Equal(t, closes.Format(time.RFC3339), row[15], "next close")

	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	sha2 := repo.commitAndPush("v2")
	mustFerry(t, "app", "refresh", "windowed")
	eventually(t, time.Minute, "the automated sync of v2 held by the window", func() (bool, string) {
		v, err := queryView(t, c, "windowed")
		if err != nil {
			return false, err.Error()
		}
		sw := v.Status.SyncWindow
		return sw != nil && sw.Revision == sha2, fmt.Sprintf("%+v", sw)
	})
	out = mustFerry(t, "app", "get", "windowed")
	t.Log(out)
	require.Contains(t, out, "Sync Window:   automated sync of "+short(sha2)+" held: sync blocked by deny sync window "+
		`team-w/syncWindows[0] (deny "`)
	require.Contains(t, out, "syncs may run from "+closes.Format(time.RFC3339))
	require.Equal(t, "v1", version(), "nothing synced in the window")

	// A manual sync is refused: by the CLI, and by the workflow itself when
	// the sync update comes from any Temporal client.
	out, err := ferry(t, "app", "sync", "windowed")
	require.Error(t, err, out)
	require.Contains(t, out, `app "windowed": sync blocked by deny sync window team-w/syncWindows[0]`)
	require.Contains(t, out, "manualSync: true")
	handle, err := c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: contract.WorkflowID("windowed"), UpdateName: contract.UpdateSync,
		Args: []any{contract.SyncRequest{}}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(context.Background(), nil)
	}
	require.ErrorContains(t, err, `app "windowed": sync blocked by deny sync window team-w/syncWindows[0]`)
	require.Equal(t, "v1", version(), "the refused syncs changed nothing")

	// Nobody refreshes the app, and it polls hourly: the window's own timer
	// runs the sync when it closes.
	eventually(t, 5*time.Minute, "v2 synced once the window closed", func() (bool, string) {
		return version() == "v2", version()
	})
	v, err := queryView(t, c, "windowed")
	require.NoError(t, err)
	require.Equal(t, sha2, v.Status.Sync.Revision)
	require.Nil(t, v.Status.SyncWindow, "nothing held any more")
	require.False(t, v.Status.OperationState.StartedAt.Before(closes), "synced at %s, the window closed at %s",
		v.Status.OperationState.StartedAt, closes)
	opened := false
	for _, ev := range events(t, c, "windowed") {
		opened = opened || (ev.GetEventType() == enumspb.EVENT_TYPE_TIMER_STARTED && summaryOf(t, ev) == "sync window opens")
	}
	require.True(t, opened, "a timer waited for the window to open")

	// In a deny window with manualSync: true, automated syncs wait and a
	// manual one runs.
	window, _ = denyWindowNow("UTC", true)
	mustFerry(t, "project", "apply", "-f", writeFile(t, windowsProjectYAML(repo.URL, window)))
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v3")})
	sha3 := repo.commitAndPush("v3")
	out = mustFerry(t, "app", "sync", "windowed", "--wait")
	t.Log(out)
	require.Equal(t, "v3", version(), "the manual sync ran in the manualSync window")
	require.Equal(t, sha3, lastOp(t, "windowed").Revision)

	recordHistories(t, "windowed")
	mustFerry(t, "app", "delete", "windowed", "--cascade")
	mustFerry(t, "project", "delete", "team-w")
}
