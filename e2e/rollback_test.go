package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestRollbackRestoresTheOldPath: a commit moves the app's manifests from
// v1/ to v2/ (and changes them), and spec.source.path follows; a rollback to
// the first deployment restores what v1/ held at its commit, because it
// deploys the history entry's whole source as Argo CD does. With the
// current path, that commit renders nothing at all (v2/ did not exist).
func TestRollbackRestoresTheOldPath(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	repo := newRepo(t, "rollback")
	repo.write(map[string]string{"v1/cm.yaml": configMap("settings-v1", "one")})
	sha1 := repo.commitAndPush("v1")
	file := writeFile(t, appYAML("rollback", repo.URL, "v1", "rollback", false, "3m"))
	mustFerry(t, "app", "apply", "-f", file)
	mustFerry(t, "app", "sync", "rollback", "--wait")
	waitApp(t, "rollback", sha1, 2*time.Minute)

	repo.git("rm", "-q", "-r", "v1")
	repo.write(map[string]string{"v2/cm.yaml": configMap("settings-v2", "two")})
	sha2 := repo.commitAndPush("move the manifests to v2/ and change them")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("rollback", repo.URL, "v2", "rollback", false, "3m")))
	mustFerry(t, "app", "sync", "rollback", "--prune", "--wait")
	waitApp(t, "rollback", sha2, 2*time.Minute)
	ctx := context.Background()
	for _, r := range regions {
		_, err := kubeClient(t, r).CoreV1().ConfigMaps("rollback").Get(ctx, "settings-v1", metav1.GetOptions{})
		require.Error(t, err, "v1's ConfigMap pruned in %s", r)
		require.Equal(t, "two", configMapVersion(t, r, "rollback", "settings-v2"))
	}
	history := mustFerry(t, "app", "history", "rollback")
	require.Contains(t, history, sha1)
	require.Contains(t, history, sha2)

	out := mustFerry(t, "app", "rollback", "rollback", "0", "--prune")
	require.Contains(t, out, "Succeeded", out)
	for _, r := range regions {
		require.Equal(t, "one", configMapVersion(t, r, "rollback", "settings-v1"), "v1's ConfigMap back in %s", r)
		_, err := kubeClient(t, r).CoreV1().ConfigMaps("rollback").Get(ctx, "settings-v2", metav1.GetOptions{})
		require.Error(t, err, "v2's ConfigMap pruned by the rollback in %s", r)
	}
	v, err := queryView(t, c, "rollback")
	require.NoError(t, err)
	h := v.Status.History
	require.Len(t, h, 3)
	require.Equal(t, sha1, h[2].Revision)
	require.Equal(t, "v1", h[2].Source.Path, "the new entry names the path deployed")
	require.Equal(t, "v2", v.Spec.Source.Path, "the spec is left as it is")
	// As in Argo CD, the app is OutOfSync with its spec after a rollback.
	mustFerry(t, "app", "refresh", "rollback")
	eventually(t, time.Minute, "OutOfSync with spec.source after the rollback", func() (bool, string) {
		v, err := queryView(t, c, "rollback")
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Status == app.SyncStatusOutOfSync && v.Status.Sync.Revision == sha2,
			fmt.Sprintf("%s at %s", v.Status.Sync.Status, short(v.Status.Sync.Revision))
	})

	mustFerry(t, "app", "delete", "rollback", "--cascade")
	recordHistories(t, "rollback")
}
