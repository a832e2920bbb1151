package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestRollbackRestoresTheOldSources: a multi-source app's second source
// moves its manifests from v1/ to v2/ (and changes them), and its path in
// spec.sources follows; a rollback to the first deployment restores what
// v1/ held at its commit, with the first source as it was, because it
// deploys the history entry's sources (and revisions) as Argo CD does.
func TestRollbackRestoresTheOldSources(t *testing.T) {
	const name, ns = "rollback-sources", "rollback-sources"
	startWorker(t)
	c := temporalClient(t)
	base := newRepo(t, "rollback-sources-base")
	base.write(map[string]string{"base/cm.yaml": configMap("base", "base")})
	baseSHA := base.commitAndPush("base")
	repo := newRepo(t, "rollback-sources-extra")
	repo.write(map[string]string{"v1/cm.yaml": configMap("settings-v1", "one")})
	sha1 := repo.commitAndPush("v1")
	spec := func(path string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\nspec:\n  pollInterval: 3m\n  sources:\n", name)
		fmt.Fprintf(&b, "  - {repoURL: %s, targetRevision: main, path: base}\n", base.URL)
		fmt.Fprintf(&b, "  - {repoURL: %s, targetRevision: main, path: %s}\n  destinations:\n", repo.URL, path)
		for _, r := range regions {
			fmt.Fprintf(&b, "    - {name: %s, namespace: %s}\n", r, ns)
		}
		b.WriteString("  syncPolicy:\n    syncOptions: [CreateNamespace=true]\n")
		return writeFile(t, b.String())
	}
	mustFerry(t, "app", "apply", "-f", spec("v1"))
	mustFerry(t, "app", "sync", name, "--wait")
	waitApp(t, name, baseSHA+","+sha1, 2*time.Minute)

	repo.git("rm", "-q", "-r", "v1")
	repo.write(map[string]string{"v2/cm.yaml": configMap("settings-v2", "two")})
	sha2 := repo.commitAndPush("move the manifests to v2/ and change them")
	mustFerry(t, "app", "apply", "-f", spec("v2"))
	mustFerry(t, "app", "sync", name, "--prune", "--wait")
	waitApp(t, name, baseSHA+","+sha2, 2*time.Minute)
	ctx := context.Background()
	for _, r := range regions {
		_, err := kubeClient(t, r).CoreV1().ConfigMaps(ns).Get(ctx, "settings-v1", metav1.GetOptions{})
		require.Error(t, err, "v1's ConfigMap pruned in %s", r)
		require.Equal(t, "two", configMapVersion(t, r, ns, "settings-v2"))
	}

	out := mustFerry(t, "app", "rollback", name, "0", "--prune")
	require.Contains(t, out, "Succeeded", out)
	for _, r := range regions {
		require.Equal(t, "one", configMapVersion(t, r, ns, "settings-v1"), "v1's ConfigMap back in %s", r)
		require.Equal(t, "base", configMapVersion(t, r, ns, "base"), "the first source's ConfigMap kept in %s", r)
		_, err := kubeClient(t, r).CoreV1().ConfigMaps(ns).Get(ctx, "settings-v2", metav1.GetOptions{})
		require.Error(t, err, "v2's ConfigMap pruned by the rollback in %s", r)
	}
	v, err := queryView(t, c, name)
	require.NoError(t, err)
	h := v.Status.History
	require.Len(t, h, 3)
	require.Equal(t, []string{baseSHA, sha1}, h[2].Revisions, "the new entry names the revisions deployed")
	require.Len(t, h[2].Sources, 2)
	require.Equal(t, "v1", h[2].Sources[1].Path, "and the sources")
	require.Equal(t, "v2", v.Spec.Sources[1].Path, "the spec is left as it is")
	// As in Argo CD, the app is OutOfSync with its spec after a rollback.
	mustFerry(t, "app", "refresh", name)
	eventually(t, time.Minute, "OutOfSync with spec.sources after the rollback", func() (bool, string) {
		v, err := queryView(t, c, name)
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Status == app.SyncStatusOutOfSync && v.Status.Sync.Revision == baseSHA+","+sha2,
			fmt.Sprintf("%s at %s", v.Status.Sync.Status, v.Status.Sync.Revision)
	})
	mustFerry(t, "app", "delete", name, "--cascade")
	recordHistories(t, name)
}
