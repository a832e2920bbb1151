package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// TestAFirstSyncThatWaitsGivesItsPlaceBack: with --onboard-concurrency 1, a
// new app whose first wave waits for health (a Deployment whose pod has no
// node) gives its place at the gate back as it starts to wait, its sync
// still running; a second new app onboards meanwhile, and the first is
// still waiting when the second is Synced and Healthy.
func TestAFirstSyncThatWaitsGivesItsPlaceBack(t *testing.T) {
	startWorker(t, "--onboard-concurrency", "1")
	c := temporalClient(t)
	gateEmpty(t, c)
	repo := newRepo(t, "gives-back")
	repo.write(map[string]string{
		"slow/web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {pool: none-such}
      containers: [{name: web, image: registry.invalid/web:v1}]
`,
		"slow/cm.yaml":  inWave(configMap("after-web", "v1"), "1"),
		"quick/cm.yaml": configMap("settings", "v1"),
	})
	repo.commitAndPush("a first wave that waits, and an app that does not")
	const slow, quick = "gives-back-slow", "gives-back-quick"
	t.Cleanup(func() {
		for _, n := range []string{slow, quick} {
			_, _ = ferry(t, "app", "delete", n, "--cascade")
		}
	})

	mustFerry(t, "app", "apply", "-f", writeFile(t, oneRegionApp(slow, repo.URL, "slow", regions[0], true)))
	eventually(t, time.Minute, slow+"'s first sync waits, its place given back", func() (bool, string) {
		v, err := queryView(t, c, slow)
		if err != nil || v.Status.OperationState == nil {
			return false, fmt.Sprint(err)
		}
		g, _ := gateView(t, c)
		return v.Status.OperationState.Phase == app.OperationRunning && g.Admitted == 0,
			fmt.Sprintf("operation %s, gate %+v", v.Status.OperationState.Phase, g)
	})

	mustFerry(t, "app", "apply", "-f", writeFile(t, oneRegionApp(quick, repo.URL, "quick", regions[0], true)))
	mustFerry(t, "app", "wait", quick, "--sync", "--health", "--timeout", "1m")
	v, err := queryView(t, c, slow)
	require.NoError(t, err)
	require.Equal(t, app.OperationRunning, v.Status.OperationState.Phase,
		"%s still waits for its first wave while %s onboarded: %s", slow, quick, v.Status.OperationState.Message)

	mustFerry(t, "app", "terminate-op", slow)
	mustFerry(t, "app", "delete", slow, "--cascade")
	eventually(t, time.Minute, "the gate empty again", func() (bool, string) {
		g, ok := gateView(t, c)
		return ok && g == contract.OnboardGateView{Capacity: 1}, fmt.Sprint(g)
	})
	recordHistories(t, slow)
}
