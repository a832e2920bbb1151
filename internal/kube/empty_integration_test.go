package kube_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// TestANewNamespaceIsNotAskedForEachObject: a new app in a namespace that
// does not exist yet is compared with one request (the namespace's), not
// one per object, and synced with CreateNamespace=true without asking for
// any of its objects first; both still tell the truth about each object.
func TestANewNamespaceIsNotAskedForEachObject(t *testing.T) {
	e := newEnv(t)
	ns := e.ns + "-new"
	t.Cleanup(func() { _ = e.dyn.Resource(namespaces).Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	reads := func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/namespaces/"+ns)
	}
	cluster, n := e.clusterCounting(kube.DefaultOptions(), reads)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	cluster.EnableLiveCache(ctx, nil)
	// The region worker's cache already watches ConfigMaps (another app's).
	_, err := cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: manyConfigMaps(1)})
	require.NoError(t, err)
	require.True(t, cluster.WaitSynced(e.ctx))

	objs := manyConfigMaps(20)
	n.Store(0)
	states, err := cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: ns, Objects: objs})
	require.NoError(t, err)
	require.Len(t, states, len(objs))
	for _, st := range states {
		assert.Equal(t, app.SyncStatusOutOfSync, st.Sync, st.Key.Name)
		assert.Equal(t, app.HealthMissing, st.Health, st.Key.Name)
	}
	assert.EqualValues(t, 1, n.Load(), "the compare asks for the namespace alone")

	n.Store(0)
	cs, err := cluster.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: ns, Objects: objs, CreateNamespace: true})
	require.NoError(t, err)
	created := 0
	for _, ch := range cs.Entries {
		if ch.Key.Kind == "ConfigMap" {
			assert.Equal(t, kube.ActionCreated, ch.Action, ch.Key.Name)
			created++
		}
	}
	assert.Equal(t, len(objs), created)
	assert.EqualValues(t, 1, n.Load(), "the sync asks whether the namespace exists, and for none of its objects")

	// The namespace exists now: the next compare asks as before, and finds
	// every object.
	states, err = cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: ns, Objects: objs})
	require.NoError(t, err)
	for _, st := range states {
		assert.Equal(t, app.SyncStatusSynced, st.Sync, st.Key.Name)
	}
	// A second sync creates nothing: it asks (the cache, or the API server)
	// and finds them all.
	cs, err = cluster.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: ns, Objects: objs, CreateNamespace: true})
	require.NoError(t, err)
	for _, ch := range cs.Entries {
		assert.Equal(t, kube.ActionUnchanged, ch.Action, ch.Key.Name)
	}
}
