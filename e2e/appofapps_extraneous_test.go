package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestAppOfAppsChildIgnoreExtraneous: a child Application whose own
// compare-options annotation says IgnoreExtraneous, gone from the parent's
// Git, shows OutOfSync and requiresPruning in the parent without making the
// parent OutOfSync, as Argo CD reads a managed Application's annotation;
// a child without it makes the parent OutOfSync. The parent syncs by hand,
// so neither is pruned.
func TestAppOfAppsChildIgnoreExtraneous(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "ie-platform")
	quiet := strings.Replace(childApp("ie-quiet", repo.URL), "  namespace: argocd\n",
		"  namespace: argocd\n  annotations:\n    argocd.argoproj.io/compare-options: ServerSideDiff=true,IgnoreExtraneous\n", 1)
	repo.write(map[string]string{
		"apps/ie-quiet.yaml": quiet,
		"apps/ie-loud.yaml":  childApp("ie-loud", repo.URL),
		"ie-quiet/cm.yaml":   configMap("quiet", "v1"),
		"ie-loud/cm.yaml":    configMap("loud", "v1"),
		"apps/README.md":     "The child Applications of ie-platform.\n",
	})
	sha1 := repo.commitAndPush("two children")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("ie-platform", repo.URL, "apps", "ie-platform", false, "3m")))
	mustFerry(t, "app", "sync", "ie-platform")
	waitApp(t, "ie-quiet", sha1, 2*time.Minute)
	waitApp(t, "ie-loud", sha1, 2*time.Minute)
	waitApp(t, "ie-platform", sha1, time.Minute)

	// The quiet child leaves Git: OutOfSync in the parent, not counted.
	repo.git("rm", "-q", "apps/ie-quiet.yaml")
	sha2 := repo.commitAndPush("drop ie-quiet")
	mustFerry(t, "app", "refresh", "ie-platform")
	st := waitApp(t, "ie-platform", sha2, time.Minute)
	row := childRow(st, "ie-quiet")
	require.NotNil(t, row, "a row of ie-quiet in %+v", st.Resources)
	require.Equal(t, app.SyncStatusOutOfSync, row.Status, "%+v", row)
	require.True(t, row.RequiresPruning, "%+v", row)
	require.Contains(t, row.Message, "IgnoreExtraneous")
	waitApp(t, "ie-quiet", sha1, time.Minute) // not pruned: the parent syncs by hand

	// The loud child leaves Git too: the parent is OutOfSync for it.
	repo.git("rm", "-q", "apps/ie-loud.yaml")
	sha3 := repo.commitAndPush("drop ie-loud")
	mustFerry(t, "app", "refresh", "ie-platform")
	c := temporalClient(t)
	eventually(t, time.Minute, "ie-platform OutOfSync at "+short(sha3), func() (bool, string) {
		v, err := queryView(t, c, "ie-platform")
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Status == app.SyncStatusOutOfSync && v.Status.Sync.Revision == sha3,
			fmt.Sprintf("%s at %s: %+v", v.Status.Sync.Status, short(v.Status.Sync.Revision), v.Status.Resources)
	})

	mustFerry(t, "app", "delete", "ie-platform", "--cascade=false")
	mustFerry(t, "app", "delete", "ie-quiet", "--cascade")
	mustFerry(t, "app", "delete", "ie-loud", "--cascade")
}
