package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestRegionDownAndBack: no worker serves eu-west-1. us-east-1 syncs
// without waiting for it; eu-west-1 is marked Unreachable with the reason;
// once a worker for it starts, it catches up by itself.
func TestRegionDownAndBack(t *testing.T) {
	startWorkerWith(t, "--control", "--region", "us-east-1")
	repo := newRepo(t, "regions")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	sha := repo.commitAndPush("v1")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("regions", repo.URL, "app", "regions", true, "10s")))
	c := temporalClient(t)
	eventually(t, time.Minute, "us-east-1 synced while eu-west-1 is down", func() (bool, string) {
		v, err := queryView(t, c, "regions")
		if err != nil {
			return false, err.Error()
		}
		us := v.Status.Regions["us-east-1"]
		return us.Sync == app.SyncStatusSynced && us.Revision == sha, fmt.Sprintf("%+v", v.Status.Regions)
	})
	eventually(t, 3*time.Minute, "eu-west-1 marked Unreachable", func() (bool, string) {
		v, err := queryView(t, c, "regions")
		if err != nil {
			return false, err.Error()
		}
		eu := v.Status.Regions["eu-west-1"]
		return eu.Unreachable && strings.Contains(eu.Message, "Unreachable"), fmt.Sprintf("%+v", eu)
	})
	out := mustFerry(t, "app", "get", "regions")
	require.Contains(t, out, "Unreachable")

	startWorkerWith(t, "--region", "eu-west-1")
	st := waitApp(t, "regions", sha, 2*time.Minute)
	require.False(t, st.Regions["eu-west-1"].Unreachable)
	mustFerry(t, "app", "delete", "regions", "--cascade")
}
