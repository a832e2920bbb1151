package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestSyncLocal: ferry app sync --local deploys a directory's uncommitted
// manifests (a changed ConfigMap, a new one) to every region, rendered by
// the worker with the app's options; the operation and ferry app get,
// history and -o json say local manifests and no revision; nothing of the
// manifests is in the history or in clear in Redis; the app is OutOfSync
// with Git at once, and a normal sync puts Git back. With automated sync
// the same command is refused before anything is sent or changed.
func TestSyncLocal(t *testing.T) {
	startWorker(t)
	c := temporalClient(t)
	repo := newRepo(t, "synclocal")
	repo.write(map[string]string{"app/cm.yaml": configMap("settings", "git")})
	sha := repo.commitAndPush("git")
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("synclocal", repo.URL, "app", "synclocal", false, "3m")))
	mustFerry(t, "app", "sync", "synclocal", "--wait")
	waitApp(t, "synclocal", sha, 2*time.Minute)

	// A working copy with uncommitted changes, and a .git the tree leaves out.
	const marker = "local-edit-5d1c9e"
	work := t.TempDir()
	for name, content := range map[string]string{
		"app/cm.yaml": configMap("settings", marker), "app/extra.yaml": configMap("extra", marker), ".git/HEAD": "ref: refs/heads/main\n",
	} {
		p := filepath.Join(work, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	out := mustFerry(t, "app", "sync", "synclocal", "--local", filepath.Join(work, "app"), "--local-repo-root", work,
		"--redis-addr", stack.RedisAddr, "--wait")
	require.Contains(t, out, "Succeeded", out)
	require.Contains(t, out, "local manifests sha256:", out)
	ctx := context.Background()
	for _, r := range regions {
		require.Equal(t, marker, configMapVersion(t, r, "synclocal", "settings"), "the changed manifest is live in %s", r)
		require.Equal(t, marker, configMapVersion(t, r, "synclocal", "extra"), "the new manifest is live in %s", r)
	}
	v, err := queryView(t, c, "synclocal")
	require.NoError(t, err)
	op := v.Status.OperationState
	require.Equal(t, app.OperationSucceeded, op.Phase)
	require.Empty(t, op.Revision, "no revision, as Argo CD records a local sync")
	require.True(t, strings.HasPrefix(op.Local, "sha256:"), op.Local)
	h := v.Status.History
	require.Len(t, h, 2)
	require.Empty(t, h[1].Revision)
	require.Equal(t, op.Local, h[1].Local)
	require.Contains(t, mustFerry(t, "app", "get", "synclocal"), "Sync Source:   local manifests "+op.Local[:len("sha256:")+12])
	require.Contains(t, mustFerry(t, "app", "history", "synclocal"), "local manifests "+op.Local[:len("sha256:")+12])
	js := mustFerry(t, "app", "get", "synclocal", "-o", "json")
	require.Contains(t, js, `"ferryLocal"`)
	require.Contains(t, js, op.Local)

	eventually(t, time.Minute, "OutOfSync with Git after the local sync", func() (bool, string) {
		v, err := queryView(t, c, "synclocal")
		if err != nil {
			return false, err.Error()
		}
		return v.Status.Sync.Status == app.SyncStatusOutOfSync && v.Status.Sync.Revision == sha,
			fmt.Sprintf("%s at %s", v.Status.Sync.Status, short(v.Status.Sync.Revision))
	})
	for runID, hist := range histories(t, c, "synclocal") {
		require.NotContains(t, string(hist), marker, "the history of run %s holds a manifest", runID)
	}
	for key, val := range redisValues(t) {
		require.NotContains(t, val, marker, "Redis key %s holds the local manifests in clear", key)
	}

	out = mustFerry(t, "app", "sync", "synclocal", "--prune", "--wait")
	require.Contains(t, out, "revision "+short(sha), out)
	waitApp(t, "synclocal", sha, 2*time.Minute)
	for _, r := range regions {
		require.Equal(t, "git", configMapVersion(t, r, "synclocal", "settings"), "Git's manifest back in %s", r)
		_, err := kubeClient(t, r).CoreV1().ConfigMaps("synclocal").Get(ctx, "extra", metav1.GetOptions{})
		require.Error(t, err, "the local-only ConfigMap pruned in %s", r)
	}

	// With automated sync: refused up front, nothing sent, nothing changed.
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("synclocal", repo.URL, "app", "synclocal", true, "3m")))
	out, err = ferry(t, "app", "sync", "synclocal", "--local", filepath.Join(work, "app"), "--redis-addr", stack.RedisAddr)
	require.Error(t, err, out)
	require.Contains(t, out, `app "synclocal": local sync: a local sync is refused while automated sync is on`, out)
	require.Contains(t, out, "ferry app set synclocal --sync-policy none", out)
	v, err = queryView(t, c, "synclocal")
	require.NoError(t, err)
	require.Len(t, v.Status.History, 3, "no operation ran")
	require.Empty(t, v.Status.OperationState.Local)
	for _, r := range regions {
		require.Equal(t, "git", configMapVersion(t, r, "synclocal", "settings"), "nothing changed in %s", r)
	}
	out, err = ferry(t, "app", "sync", "synclocal", "--local", filepath.Join(work, "missing"), "--dry-run", "--redis-addr", stack.RedisAddr)
	require.Error(t, err, out)
	require.Contains(t, out, "--local "+filepath.Join(work, "missing")+": no such directory", out)

	mustFerry(t, "app", "delete", "synclocal", "--cascade")
	recordHistories(t, "synclocal")
}
