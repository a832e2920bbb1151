package e2e

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestForgedCacheEntryIsNotApplied plays whoever can write to the workers'
// Redis: before the app's first render it plants, under the very key the
// control worker will read (computed from public facts: repo, SHA, path,
// renderer version), a well-formed set whose digest matches its content and
// whose ConfigMap is not in Git. The workers must render from Git instead
// and sync the real objects; the forged one must reach no region.
func TestForgedCacheEntryIsNotApplied(t *testing.T) {
	repo := newRepo(t, "forged-cache")
	repo.write(map[string]string{
		"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real\ndata:\n  from: git\n",
	})
	sha := repo.commitAndPush("the real manifests")

	forged := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "forged", "namespace": "forged-cache"},
		"data":     map[string]any{"from": "the attacker"},
	}}
	payload, _, err := manifests.Encode(manifests.Set{forged})
	require.NoError(t, err)
	key := manifests.Key(repo.URL, sha, app.Source{RepoURL: repo.URL, TargetRevision: "main", Path: "app"},
		(&render.Renderer{}).Version())
	rdb := redis.NewClient(&redis.Options{Addr: stack.RedisAddr, DisableIdentity: true})
	defer rdb.Close()
	ctx := context.Background()
	require.NoError(t, rdb.Set(ctx, "ferry:manifests:"+key, payload, 0).Err())

	startWorker(t)
	mustFerry(t, "app", "apply", "-f", writeFile(t, appYAML("forged-cache", repo.URL, "app", "forged-cache", true, "3m")))
	waitApp(t, "forged-cache", sha, 3*time.Minute)

	for _, r := range regions {
		cm, err := kubeClient(t, r).CoreV1().ConfigMaps("forged-cache").Get(ctx, "real", metav1.GetOptions{})
		require.NoError(t, err, "region %s: the ConfigMap from Git", r)
		require.Equal(t, "git", cm.Data["from"], "region %s", r)
		_, err = kubeClient(t, r).CoreV1().ConfigMaps("forged-cache").Get(ctx, "forged", metav1.GetOptions{})
		require.True(t, apierrors.IsNotFound(err), "region %s holds the forged ConfigMap: %v", r, err)
	}
	// The render from Git replaced the forged entry with a sealed one.
	entry, err := rdb.Get(ctx, "ferry:manifests:"+key).Bytes()
	require.NoError(t, err, "the entry under the key the test computed; if missing, the key scheme changed and the test forged nothing")
	require.False(t, bytes.Equal(entry, payload), "the forged entry is still in Redis")
	mustFerry(t, "app", "delete", "forged-cache", "--cascade")
}
