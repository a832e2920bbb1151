package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

const onboardDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: registry.example.com/web:1}
`

// TestNewAppOfOneRegionSyncsAtOnce: a new automated app of one region is
// rendered in the workflow task that resolved it and synced without a
// compare before the sync (there is nothing in the region to compare), and
// ends Synced and Healthy like any other, its resources listed in the
// region.
func TestNewAppOfOneRegionSyncsAtOnce(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	repo := newRepo(t, "onboard")
	repo.write(map[string]string{"app/web.yaml": onboardDeployment, "app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	const name = "onboard"
	region := regions[0]
	yaml := strings.Replace(appYAML(name, repo.URL, "app", name, true, "3m"),
		fmt.Sprintf("    - {name: %s, namespace: %s}\n", regions[1], name), "", 1)
	require.NotContains(t, yaml, regions[1])
	mustFerry(t, "app", "apply", "-f", writeFile(t, yaml))
	mustFerry(t, "app", "wait", name, "--sync", "--health", "--timeout", "3m")

	v, err := queryView(t, c, name)
	require.NoError(t, err)
	require.Equal(t, sha, v.Status.Sync.Revision)
	require.Equal(t, app.SyncStatusSynced, v.Status.Regions[region].Sync)
	require.Equal(t, app.HealthHealthy, v.Status.Regions[region].Health)
	require.Len(t, v.Status.Resources, 2, "the Deployment and the ConfigMap: %+v", v.Status.Resources)
	require.NotNil(t, v.Status.OperationState)
	require.Equal(t, app.OperationSucceeded, v.Status.OperationState.Phase)
	require.Equal(t, "Deployment", kubectl(t, region, "-n", name, "get", "deployment/web", "-o", "jsonpath={.kind}"))

	// Its history: the render is a local activity (a marker named for it),
	// and the first activity scheduled is the region's Sync.
	var first string
	renderedLocally := false
	for _, ev := range events(t, c, name) {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			renderedLocally = renderedLocally || strings.HasPrefix(summaryOf(t, ev), "Render "+repo.URL)
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if first == "" {
				first = ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			}
		}
	}
	require.True(t, renderedLocally, "the first render is a local activity named Render %s", repo.URL)
	require.Equal(t, contract.ActivitySync, first, "the first activity scheduled syncs the region")
	recordHistories(t, name)
	mustFerry(t, "app", "delete", name, "--cascade")
	eventually(t, time.Minute, "the app's Deployment deleted", func() (bool, string) {
		out := kubectl(t, region, "-n", name, "get", "deployment/web", "--ignore-not-found", "-o", "name")
		return strings.TrimSpace(out) == "", out
	})
}
