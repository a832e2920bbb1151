package kube

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/ferry-gitops/ferry/internal/app"
)

// liveCache holds informers, one per resource (group, version, resource)
// the region's apps use, on the objects that carry the ferry.dev/app
// label. Each starts on first use; until it has synced, reads go to the
// API server.
type liveCache struct {
	c       *Cluster
	ctx     context.Context
	onDrift func(Drift)

	mu        sync.Mutex
	informers map[schema.GroupVersionResource]*liveInformer
	// probe tells whether the API server answers (reachability.go); nil
	// until WatchReachability.
	probe *reachabilityProbe

	// health is what the last compare reported of each object (watching.go).
	healthMu sync.Mutex
	health   map[cacheKey]notedHealth
}

type liveInformer struct {
	gvk    schema.GroupVersionKind
	inf    cache.SharedIndexInformer
	synced atomic.Bool
}

// indexByApp indexes cached objects by their ferry.dev/app label.
const indexByApp = "app"

// EnableLiveCache turns on the informer cache: from now on, Compare and the
// waits of a sync read live objects from informers (started per kind on
// first use, stopped when ctx ends) instead of sending a Get or a List per
// object, and onDrift, when not nil, hears of every change to a tracked
// object that Ferry did not make (see Drift). Call it once, before use.
func (c *Cluster) EnableLiveCache(ctx context.Context, onDrift func(Drift)) {
	c.liveP.Store(&liveCache{c: c, ctx: ctx, onDrift: onDrift, informers: map[schema.GroupVersionResource]*liveInformer{}})
}

// LiveCacheEnabled tells whether EnableLiveCache has run.
func (c *Cluster) LiveCacheEnabled() bool { return c.live() != nil }

func (c *Cluster) live() *liveCache { return c.liveP.Load() }

// LiveCacheKinds returns how many resources the live cache watches.
func (c *Cluster) LiveCacheKinds() int {
	l := c.live()
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.informers)
}

// informer returns the informer of m's resource, starting it when it is
// new. It may not have synced yet.
func (l *liveCache) informer(m *meta.RESTMapping) *liveInformer {
	l.mu.Lock()
	defer l.mu.Unlock()
	if li, ok := l.informers[m.Resource]; ok {
		return li
	}
	f := dynamicinformer.NewFilteredDynamicInformer(l.c.dynamic, m.Resource, metav1.NamespaceAll, 0,
		cache.Indexers{indexByApp: func(obj any) ([]string, error) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				return []string{u.GetLabels()[LabelApp]}, nil
			}
			return nil, nil
		}},
		func(o *metav1.ListOptions) { o.LabelSelector = LabelApp })
	li := &liveInformer{gvk: m.GroupVersionKind, inf: f.Informer()}
	if l.onDrift != nil {
		_, _ = li.inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc:    func(obj any, initial bool) { l.added(li, obj, initial) },
			UpdateFunc: func(old, cur any) { l.updated(li, old, cur) },
			DeleteFunc: func(obj any) { l.deleted(li, obj) },
		})
	}
	_ = li.inf.SetWatchErrorHandlerWithContext(l.onWatchError)
	l.informers[m.Resource] = li
	go li.inf.Run(l.ctx.Done())
	go func() {
		if cache.WaitForCacheSync(l.ctx.Done(), li.inf.HasSynced) {
			li.synced.Store(true)
		}
	}()
	return li
}

// synced returns m's informer once it has synced, nil before (or when the
// cache is off).
func (l *liveCache) synced(m *meta.RESTMapping) *liveInformer {
	if l == nil || m == nil {
		return nil
	}
	li := l.informer(m)
	if !li.synced.Load() {
		return nil
	}
	return li
}

// WaitSynced waits until every informer started so far has synced, or
// ctx ends: for tests and benchmarks that measure a warm cache.
func (c *Cluster) WaitSynced(ctx context.Context) bool {
	l := c.live()
	if l == nil {
		return false
	}
	return Poll(ctx, 20*time.Millisecond, func(context.Context) (bool, error) {
		all := true
		l.mu.Lock()
		for _, li := range l.informers {
			all = all && li.synced.Load()
		}
		l.mu.Unlock()
		return all, nil
	}) == nil
}

// liveGet returns the live object named by key (nil when it does not
// exist): from the live cache when its informer has synced and its copy is
// not older than Ferry's last write of the object, else from the API
// server. The cache holds only objects labelled as an app's: one it does
// not hold may still exist, applied by another tool (Argo CD) and not yet
// adopted, so it is asked for.
func (c *Cluster) liveGet(ctx context.Context, m *meta.RESTMapping, key app.ResourceKey) (*unstructured.Unstructured, error) {
	if obj, ok := c.liveCached(m, key); ok {
		return obj, nil
	}
	return c.getLive(ctx, m, key)
}

// liveCached returns the live cache's copy of the object, when its
// informer has synced, holds it, and its copy is not older than Ferry's
// last write of it.
func (c *Cluster) liveCached(m *meta.RESTMapping, key app.ResourceKey) (*unstructured.Unstructured, bool) {
	li := c.live().synced(m)
	if li == nil {
		return nil, false
	}
	item, exists, err := li.inf.GetStore().GetByKey(storeKey(key))
	if err != nil || !exists {
		return nil, false
	}
	obj, _ := item.(*unstructured.Unstructured)
	if obj == nil || !c.writes.current(key, obj.GetResourceVersion()) {
		return nil, false
	}
	out := obj.DeepCopy()
	out.SetGroupVersionKind(li.gvk)
	return out, true
}

// getLive gets the object from the API server; nil when it does not exist.
func (c *Cluster) getLive(ctx context.Context, m *meta.RESTMapping, key app.ResourceKey) (*unstructured.Unstructured, error) {
	live, err := c.resource(m, key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// list returns the cached objects of m's resource labelled for appName,
// and false when the cache cannot answer.
func (l *liveCache) list(m *meta.RESTMapping, appName string) ([]*unstructured.Unstructured, bool) {
	li := l.synced(m)
	if li == nil {
		return nil, false
	}
	items, err := li.inf.GetIndexer().ByIndex(indexByApp, AppLabel(appName))
	if err != nil {
		return nil, false
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for _, item := range items {
		if u, ok := item.(*unstructured.Unstructured); ok {
			cp := u.DeepCopy()
			cp.SetGroupVersionKind(li.gvk)
			out = append(out, cp)
		}
	}
	return out, true
}

func storeKey(key app.ResourceKey) string {
	if key.Namespace == "" {
		return key.Name
	}
	return key.Namespace + "/" + key.Name
}
