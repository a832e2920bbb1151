package appobjects

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/ferry-gitops/ferry/internal/app"
)

// fakeApps records what the controller asks of the apps.
type fakeApps struct {
	applied, names, synced, refreshed []string
	deleted                           []bool // cascade of each delete
	refuse                            error
}

func (f *fakeApps) Apply(_ context.Context, a *app.Application, object string) error {
	if f.refuse != nil {
		return &Refused{Err: f.refuse}
	}
	f.applied = append(f.applied, object)
	f.names = append(f.names, a.Metadata.Name)
	return nil
}
func (f *fakeApps) Sync(_ context.Context, name, _ string, _ *Operation) error {
	f.synced = append(f.synced, name)
	return nil
}
func (f *fakeApps) Refresh(_ context.Context, name string, _ bool) error {
	f.refreshed = append(f.refreshed, name)
	return nil
}
func (f *fakeApps) Delete(_ context.Context, _, _ string, cascade bool, _ string) (bool, error) {
	f.deleted = append(f.deleted, cascade)
	return true, nil
}
func (f *fakeApps) Owned(context.Context) (map[string]string, error) { return nil, nil }

// controller reconciles the objects through fake apps: the indexer is
// filled from the fake API, as the informer would be.
func controller(t *testing.T, objs ...*unstructured.Unstructured) (*Controller, *fakeApps) {
	t.Helper()
	o, _ := fakeObjects(t, objs...)
	apps := &fakeApps{}
	c := &Controller{Objects: o, Apps: apps, Namespace: "argocd", applied: map[string]string{}, handed: map[string]string{},
		indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	return c, apps
}

// sync refills the indexer from the fake API, as a watch event would.
func (c *Controller) syncIndexer(t *testing.T) {
	t.Helper()
	list, err := c.Objects.Client.Resource(Applications).Namespace("argocd").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	var items []any
	for i := range list.Items {
		items = append(items, &list.Items[i])
	}
	require.NoError(t, c.indexer.Replace(items, ""))
}

func TestReconcileTakesOperationAndRefreshOnce(t *testing.T) {
	c, apps := controller(t, object(t, guestbook))
	ctx := context.Background()
	c.syncIndexer(t)
	_, err := c.reconcile(ctx, "argocd/guestbook")
	require.NoError(t, err)
	require.Equal(t, []string{"argocd/guestbook"}, apps.applied)
	require.Equal(t, []string{"guestbook"}, apps.synced)
	require.Equal(t, []string{"guestbook"}, apps.refreshed)

	c.syncIndexer(t)
	u, _, _ := c.indexer.GetByKey("argocd/guestbook")
	obj := u.(*unstructured.Unstructured)
	_, hasOp := obj.Object["operation"]
	require.False(t, hasOp, "the operation is cleared once taken")
	require.NotContains(t, obj.GetAnnotations(), RefreshAnnotation, "the refresh annotation is removed")

	_, err = c.reconcile(ctx, "argocd/guestbook")
	require.NoError(t, err)
	require.Len(t, apps.applied, 1, "an unchanged spec is not sent again")
	require.Len(t, apps.synced, 1)
	require.Len(t, apps.refreshed, 1)
}

// The cache can show an object with its operation again after the
// operation was handed and cleared (a status write seen before the
// clearing patch): the app gets it once. Set again once the cache showed it
// cleared, it is a new operation.
func TestAnOperationSeenAgainInAStaleCacheIsHandedOnce(t *testing.T) {
	c, apps := controller(t, object(t, guestbook))
	ctx := context.Background()
	c.syncIndexer(t)
	stale, _, _ := c.indexer.GetByKey("argocd/guestbook")
	stale = stale.(*unstructured.Unstructured).DeepCopy()
	_, err := c.reconcile(ctx, "argocd/guestbook")
	require.NoError(t, err)
	require.NoError(t, c.indexer.Update(stale)) // the stale copy, operation and all
	_, err = c.reconcile(ctx, "argocd/guestbook")
	require.NoError(t, err)
	require.Equal(t, []string{"guestbook"}, apps.synced, "handed once")

	c.syncIndexer(t) // the cache shows it cleared
	_, err = c.reconcile(ctx, "argocd/guestbook")
	require.NoError(t, err)
	require.NoError(t, c.indexer.Update(stale)) // the same operation, set again
	_, err = c.reconcile(ctx, "argocd/guestbook")
	require.NoError(t, err)
	require.Equal(t, []string{"guestbook", "guestbook"}, apps.synced, "a new operation, handed")
}

func TestReconcileSaysWhyTheAppRefusedAndTriesAgain(t *testing.T) {
	c, apps := controller(t, object(t, guestbook))
	apps.refuse = errors.New(`app "guestbook" is owned by app of apps "platform"`)
	c.syncIndexer(t)
	again, err := c.reconcile(context.Background(), "argocd/guestbook")
	require.NoError(t, err)
	require.Equal(t, refusedAgain, again)
	require.Empty(t, apps.synced, "no operation for an app that is not the object's")
	conds, _, _ := unstructured.NestedSlice(readStatus(t, c.Objects), "conditions")
	require.Len(t, conds, 1)
	require.Contains(t, conds[0].(map[string]any)["message"], `owned by app of apps "platform"`)
}

func TestReconcileDeletes(t *testing.T) {
	c, apps := controller(t, object(t, guestbook))
	ctx := context.Background()
	c.syncIndexer(t)
	// Gone without the finalizer: the app goes, its resources stay.
	require.NoError(t, c.indexer.Delete(&unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "guestbook", "namespace": "argocd"}}}))
	_, err := c.reconcile(ctx, "argocd/guestbook")
	require.NoError(t, err)
	require.Equal(t, []bool{false}, apps.deleted)

	// Being deleted with the finalizer: the app cascades, then the
	// finalizer goes.
	u := object(t, guestbook)
	now := metav1.Now()
	u.SetDeletionTimestamp(&now)
	require.NoError(t, c.indexer.Add(u))
	_, err = c.reconcile(ctx, "argocd/guestbook")
	require.NoError(t, err)
	require.Equal(t, []bool{false, true}, apps.deleted)
	got, err := c.Objects.Client.Resource(Applications).Namespace("argocd").Get(ctx, "guestbook", metav1.GetOptions{})
	require.NoError(t, err)
	require.Empty(t, got.GetFinalizers())
}

// TestReconcileAppsOfOtherNamespaces: an object of a namespace
// AppNamespaces lists is the app namespace/name; the control namespace's
// keep their names; a namespace no glob lists is not queued.
func TestReconcileAppsOfOtherNamespaces(t *testing.T) {
	team := object(t, strings.Replace(guestbook, "namespace: argocd", "namespace: team-a", 1))
	c, apps := controller(t, team, object(t, guestbook))
	c.AppNamespaces = []string{"team-*"}
	c.syncIndexer(t) // the control namespace's
	require.NoError(t, c.indexer.Add(team))
	ctx := context.Background()
	for _, key := range []string{"team-a/guestbook", "argocd/guestbook"} {
		require.True(t, c.listed(key), key)
		_, err := c.reconcile(ctx, key)
		require.NoError(t, err)
	}
	require.Equal(t, []string{"team-a/guestbook", "argocd/guestbook"}, apps.applied)
	require.Equal(t, []string{"team-a/guestbook", "guestbook"}, apps.names)
	require.Equal(t, []string{"team-a/guestbook", "guestbook"}, apps.synced, "the operation goes to the app of each")
	require.False(t, c.listed("elsewhere/guestbook"), "a namespace no glob lists")
	require.Equal(t, "team-a/web", c.objectKey("team-a/web"))
	require.Equal(t, "argocd/web", c.objectKey("web"))
}
