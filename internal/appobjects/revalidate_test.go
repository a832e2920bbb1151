package appobjects

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// TestRevalidateTakesAnObjectWhoseRegionCame: an object naming a region
// that is not there yet is invalid; once a cluster Secret adds the region,
// Revalidate queues it, and the same object, untouched, starts its app.
func TestRevalidateTakesAnObjectWhoseRegionCame(t *testing.T) {
	u := object(t, strings.Replace(guestbook, `{server: "https://kubernetes.default.svc", namespace: default}`, `{name: eu-west-1, namespace: default}`, 1))
	valid := object(t, strings.Replace(guestbook, "name: guestbook", "name: valid", 1))
	c, apps := controller(t, u, valid)
	base, err := regions.New([]regions.Region{{Name: "us-east-1"}})
	require.NoError(t, err)
	live := regions.NewLive(base)
	c.Objects.Validate = app.ValidateOptions{Regions: live}
	c.syncIndexer(t)
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	c.leading = &lead{indexer: c.indexer, queue: queue}

	_, err = c.reconcile(context.Background(), "argocd/guestbook")
	require.NoError(t, err)
	require.Empty(t, apps.applied)
	c.syncIndexer(t) // the status write, as the watch shows it
	conds, _, _ := unstructured.NestedSlice(readStatus(t, c.Objects), "conditions")
	require.Len(t, conds, 1)
	require.Contains(t, conds[0].(map[string]any)["message"], `unknown region "eu-west-1"`)

	require.Empty(t, live.SetClusters([]regions.Region{{Name: "eu-west-1", Server: "https://eu.example:6443"}}))
	c.Revalidate()
	require.Equal(t, 1, queue.Len(), "the invalid object alone")
	key, _ := queue.Get()
	require.Equal(t, "argocd/guestbook", key)
	_, err = c.reconcile(context.Background(), key)
	require.NoError(t, err)
	require.Equal(t, []string{"argocd/guestbook"}, apps.applied)
	_, found, _ := unstructured.NestedSlice(readStatus(t, c.Objects), "conditions")
	require.False(t, found, "the condition goes")
}
