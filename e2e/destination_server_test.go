package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
	ferryregions "github.com/ferry-gitops/ferry/internal/regions"
)

// TestDestinationServer: with the stack's regions configuration (as make
// run's), an Argo CD file whose destination.server is a region's API
// server URL syncs to that region alone, one with Argo CD's in-cluster
// address (and metadata.namespace argocd, as Argo CD's files have) to the
// in-cluster region, and an unknown server URL is refused by name.
func TestDestinationServer(t *testing.T) {
	rc, err := ferryregions.Load(stack.RegionsConfig)
	require.NoError(t, err)
	eu, ok := rc.ByName("eu-west-1")
	require.True(t, ok)
	require.NotEmpty(t, eu.Server)
	inCluster, ok := rc.InClusterRegion()
	require.True(t, ok)
	require.Equal(t, "us-east-1", inCluster.Name, "the stack's first region is in-cluster")

	startWorker(t)
	repo := newRepo(t, "by-server")
	repo.write(map[string]string{"app/cm.yaml": configMap("by-server", "v1")})
	sha := repo.commitAndPush("v1")
	argoApp := func(name, server string) string {
		return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: argocd
spec:
  project: default
  source: {repoURL: %s, targetRevision: main, path: app}
  destination: {server: %q, namespace: %s}
  syncPolicy:
    automated: {prune: true}
    syncOptions: [CreateNamespace=true]
`, name, repo.URL, server, name)
	}

	mustFerry(t, "app", "apply", "-f", writeFile(t, argoApp("to-eu", eu.Server)))
	st := waitSyncedAt(t, "to-eu", sha)
	require.Equal(t, []string{"eu-west-1"}, regionsOf(st), "the server URL is eu-west-1's")
	mustFerry(t, "app", "apply", "-f", writeFile(t, argoApp("to-in-cluster", ferryregions.InClusterServer)))
	st = waitSyncedAt(t, "to-in-cluster", sha)
	require.Equal(t, []string{"us-east-1"}, regionsOf(st), "the in-cluster address is the in-cluster region")
	for app, want := range map[string]string{"to-eu": "eu-west-1", "to-in-cluster": "us-east-1"} {
		for _, r := range regions {
			_, err := kubeClient(t, r).CoreV1().ConfigMaps(app).Get(context.Background(), "by-server", metav1.GetOptions{})
			if r == want {
				require.NoError(t, err, "%s's ConfigMap in %s", app, r)
			} else {
				require.Error(t, err, "%s synced nothing to %s", app, r)
			}
		}
	}

	out, err := ferry(t, "app", "apply", "-f", writeFile(t, argoApp("to-nowhere", "https://10.255.255.1:6443")))
	require.Error(t, err, "%s", out)
	require.Contains(t, out, `spec.destination.server: "https://10.255.255.1:6443" is the server of no region`)
	require.Contains(t, out, "eu-west-1: "+eu.Server, "the refusal lists the servers there are")
	_, err = ferry(t, "app", "get", "to-nowhere")
	require.Error(t, err, "a refused app is not created")

	// Replayed by a worker with no regions configuration, this history
	// holds the one it ran with.
	recordHistories(t, "to-eu")
	mustFerry(t, "app", "delete", "to-eu", "--cascade")
	mustFerry(t, "app", "delete", "to-in-cluster", "--cascade")
}

// waitSyncedAt waits for the app to be Synced and Healthy at sha, in
// whichever regions it targets.
func waitSyncedAt(t *testing.T, name, sha string) *app.Status {
	t.Helper()
	c := temporalClient(t)
	var st *app.Status
	eventually(t, 2*time.Minute, name+" Synced and Healthy at "+short(sha), func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		st = &v.Status
		return v.Status.Sync.Status == app.SyncStatusSynced && v.Status.Health.Status == app.HealthHealthy &&
			v.Status.Sync.Revision == sha, fmt.Sprintf("%+v", v.Status.Regions)
	})
	return st
}

// regionsOf are the regions an app's status reports, sorted.
func regionsOf(st *app.Status) []string { return slices.Sorted(maps.Keys(st.Regions)) }
