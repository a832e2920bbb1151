package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestSyncRevisionOnlyFromBranchesAndTags: a pull request's ref and its
// commit, which no branch or tag reaches, are refused to ferry app sync
// --revision, naming the app, the revision and the rule, and nothing of
// them reaches the region; a tag syncs. An app whose project carries
// ferry.dev/sync-any-revision: "true" syncs the pull request's ref.
func TestSyncRevisionOnlyFromBranchesAndTags(t *testing.T) {
	startWorker(t)
	repo := newRepo(t, "sync-revision")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v1")})
	repo.commitAndPush("v1")
	repo.git("tag", "v1")
	repo.git("push", "-q", repo.URL, "refs/tags/v1")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "v2")})
	repo.commitAndPush("v2 on main")
	repo.git("checkout", "-q", "-b", "pr")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "from-a-pull-request")})
	repo.git("add", "-A")
	repo.git("commit", "-q", "-m", "an unreviewed change")
	repo.git("push", "-q", repo.URL, "HEAD:refs/pull/1/head")
	prSHA := repo.git("rev-parse", "HEAD")
	repo.git("checkout", "-q", "main")

	const region = "us-east-1"
	appOf := func(name, project string) string {
		return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: %s}
spec:
  project: %s
  source: {repoURL: %s, targetRevision: main, path: app}
  destination: {name: %s, namespace: %s}
  syncPolicy: {syncOptions: [CreateNamespace=true]}
`, name, project, repo.URL, region, name)
	}
	mustFerry(t, "app", "apply", "-f", writeFile(t, appOf("sync-rev", "default")))
	for _, rev := range []string{"refs/pull/1/head", prSHA} {
		out, err := ferry(t, "app", "sync", "sync-rev", "--revision", rev, "--wait")
		require.Error(t, err, "sync --revision %s: %s", rev, out)
		op := lastOp(t, "sync-rev")
		require.Equal(t, app.OperationError, op.Phase, op.Message)
		for _, want := range []string{`app "sync-rev": sync refused: revision "` + rev + `"`,
			"a sync takes a branch, a tag or a commit in their history", `ferry.dev/sync-any-revision: "true"`} {
			require.Contains(t, op.Message, want)
		}
		require.Contains(t, configMapVersion(t, region, "sync-rev", "settings"), "not found", "nothing of %s reached the region", rev)
	}
	require.Contains(t, lastOp(t, "sync-rev").Message, "commit "+prSHA+" is not in the history of any branch or tag")

	mustFerry(t, "app", "sync", "sync-rev", "--revision", "v1", "--wait")
	require.Equal(t, "v1", configMapVersion(t, region, "sync-rev", "settings"), "a tag syncs")

	mustFerry(t, "project", "apply", "-f", writeFile(t, fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: previews
  annotations: {ferry.dev/sync-any-revision: "true"}
spec:
  sourceRepos: [%s]
  destinations: [{name: %s, namespace: "*"}]
  clusterResourceWhitelist: [{group: "", kind: Namespace}]
`, repo.URL, region)))
	mustFerry(t, "app", "apply", "-f", writeFile(t, appOf("sync-rev-preview", "previews")))
	mustFerry(t, "app", "sync", "sync-rev-preview", "--revision", "refs/pull/1/head", "--wait")
	eventually(t, time.Minute, "the pull request's ConfigMap", func() (bool, string) {
		v := configMapVersion(t, region, "sync-rev-preview", "settings")
		return v == "from-a-pull-request", v
	})
}
