package kube_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// counting counts the requests a Cluster sends: all of them, or those
// only accepts.
type counting struct {
	next http.RoundTripper
	n    *atomic.Int64
	only func(*http.Request) bool
}

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.only == nil || c.only(r) {
		c.n.Add(1)
	}
	return c.next.RoundTrip(r)
}

// isDryRun accepts server-side dry runs.
func isDryRun(r *http.Request) bool { return r.URL.Query().Get("dryRun") != "" }

// countingCluster is a new Cluster on the test region whose requests are
// counted; with onDrift (or live) its live cache is on.
func (e *env) countingCluster(opts kube.Options, live bool, onDrift func(kube.Drift)) (*kube.Cluster, *atomic.Int64) {
	e.t.Helper()
	c, n := e.clusterCounting(opts, nil)
	if live || onDrift != nil {
		ctx, cancel := context.WithCancel(context.Background())
		e.t.Cleanup(cancel)
		c.EnableLiveCache(ctx, onDrift)
	}
	return c, n
}

// driftingCluster is a new Cluster with its live cache on, and the drift
// it reports of the test's app. The cache watches the whole cluster: other
// tests' namespaces going away are drift of their apps, not of this one.
func (e *env) driftingCluster() (*kube.Cluster, <-chan kube.Drift) {
	drifts := make(chan kube.Drift, 64)
	c, _ := e.countingCluster(kube.DefaultOptions(), true, func(d kube.Drift) {
		if d.App == e.ns {
			drifts <- d
		}
	})
	return c, drifts
}

// clusterCounting is a new Cluster on the test region that counts the
// requests only accepts (nil: all).
func (e *env) clusterCounting(opts kube.Options, only func(*http.Request) bool) (*kube.Cluster, *atomic.Int64) {
	e.t.Helper()
	cfg, err := kube.LoadConfig(stack.Kubeconfig, region)
	require.NoError(e.t, err)
	n := &atomic.Int64{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return counting{next: rt, n: n, only: only} })
	c, err := kube.NewClusterWithOptions(cfg, opts)
	require.NoError(e.t, err)
	return c, n
}

// TestLiveCache: once its informers have synced, a compare that finds
// nothing new sends no request at all, and still sees a change at once.
func TestLiveCache(t *testing.T) {
	e := newEnv(t)
	objs := guestbook(t)
	_, err := e.apply(objs, nil)
	require.NoError(t, err)
	// Until its rollout is done, the Deployment's status changes, and a
	// compare rightly asks again for what changed.
	e.eventually("the Deployment to be rolled out", func() bool {
		d, err := e.dyn.Resource(deployments).Namespace(e.ns).Get(e.ctx, "guestbook-ui", metav1.GetOptions{})
		require.NoError(t, err)
		return rolledOut(d)
	})
	// An informer opens its watch just after its list has synced: that
	// request is the cache's own, not one a compare sends.
	var mu sync.Mutex
	var sent []string // what was counted, for the failure message
	cluster, requests := e.clusterCounting(kube.DefaultOptions(), func(r *http.Request) bool {
		if r.URL.Query().Get("watch") == "true" {
			return false
		}
		mu.Lock()
		sent = append(sent, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		return true
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cluster.EnableLiveCache(ctx, nil)
	req := kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs}
	_, err = cluster.Compare(e.ctx, req)
	require.NoError(t, err)
	require.True(t, cluster.WaitSynced(e.ctx))
	_, err = cluster.Compare(e.ctx, req) // results of live objects from the cache
	require.NoError(t, err)

	mu.Lock()
	requests.Store(0)
	sent = nil
	mu.Unlock()
	states, err := cluster.Compare(e.ctx, req)
	require.NoError(t, err)
	mu.Lock()
	assert.Equal(t, int64(0), requests.Load(), "a warm compare sends nothing; it sent %q", sent)
	mu.Unlock()
	assert.Equal(t, map[string]app.SyncStatusCode{"Deployment/guestbook-ui": "Synced", "Service/guestbook-ui": "Synced"}, syncs(states))
	assert.Equal(t, 2, cluster.LiveCacheKinds())

	_, err = e.dyn.Resource(deployments).Namespace(e.ns).Patch(e.ctx, "guestbook-ui", types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)
	e.eventually("the cache to see the change", func() bool {
		states, err := cluster.Compare(e.ctx, req)
		require.NoError(t, err)
		return syncs(states)["Deployment/guestbook-ui"] == app.SyncStatusOutOfSync
	})
}

// TestDrift: the live cache reports changes others make to tracked
// objects (an edit, a delete), and not Ferry's own (an apply, a prune).
func TestDrift(t *testing.T) {
	e := newEnv(t)
	cluster, drifts := e.driftingCluster()
	objs := append(guestbook(t), configMap("extra", nil, nil))
	apply := func(objs []*unstructured.Unstructured, prune bool) {
		_, err := cluster.Apply(e.ctx, kube.ApplyRequest{App: e.ns, Namespace: e.ns, Objects: objs, Prune: prune})
		require.NoError(t, err)
	}
	apply(objs, false)
	_, err := cluster.Compare(e.ctx, kube.CompareRequest{App: e.ns, Namespace: e.ns, Objects: objs})
	require.NoError(t, err)
	require.True(t, cluster.WaitSynced(e.ctx))
	quiet := func(what string) {
		select {
		case d := <-drifts:
			t.Errorf("%s: unexpected drift %+v", what, d)
		case <-time.After(time.Second):
		}
	}
	expect := func(what, kind string, by []string) {
		select {
		case d := <-drifts:
			assert.Equal(t, e.ns, d.App, what)
			assert.Equal(t, kind, d.Key.Kind, what)
			assert.Equal(t, by, d.By, what)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no drift reported", what)
		}
	}
	quiet("after the first apply")

	_, err = e.dyn.Resource(deployments).Namespace(e.ns).Patch(e.ctx, "guestbook-ui", types.MergePatchType,
		[]byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
	require.NoError(t, err)
	expect("a scale", "Deployment", []string{"kubectl-edit"})
	quiet("after the scale (status updates are not drift)")

	apply(objs, false)
	quiet("Ferry's own apply puts it back")

	require.NoError(t, e.dyn.Resource(services).Namespace(e.ns).Delete(e.ctx, "guestbook-ui", metav1.DeleteOptions{}))
	expect("a delete", "Service", []string{"deleted"})

	apply(objs[:1], true)
	quiet("Ferry's own prune")
}

// rolledOut tells whether a Deployment's controller has finished with its
// last change: its generation observed and its new ReplicaSet available.
func rolledOut(d *unstructured.Unstructured) bool {
	observed, _, _ := unstructured.NestedInt64(d.Object, "status", "observedGeneration")
	conds, _, _ := unstructured.NestedSlice(d.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Progressing" {
			return observed == d.GetGeneration() && m["reason"] == "NewReplicaSetAvailable"
		}
	}
	return false
}
