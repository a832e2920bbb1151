package appobjects

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/workqueue"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Apps is what the controller asks of Ferry's apps; the worker implements
// it with Temporal. name is the app's name; object the key of the
// Application object that owns it. An error wrapped in *Refused is an
// answer no retry changes.
type Apps interface {
	// Apply starts the app of a, or sends the running app the spec.
	Apply(ctx context.Context, a *app.Application, object string) error
	// Sync asks the app for the operation's sync, and returns once the app
	// took it; a *Refused when it refused it (or the sync failed at once).
	Sync(ctx context.Context, name, object string, op *Operation) error
	// Refresh asks the app to compare now.
	Refresh(ctx context.Context, name string, hard bool) error
	// Delete deletes the app object owns, with its resources when cascade
	// (propagation: app.PropagationForeground or Background). done is
	// false while the deletion runs or waits: ask again later.
	Delete(ctx context.Context, name, object string, cascade bool, propagation string) (done bool, err error)
	// Owned are the running apps that objects own: each app's name and the
	// namespace of its object.
	Owned(ctx context.Context) (map[string]string, error)
}

// Refused is an error of Apps that no retry changes: the app's owner or
// its validator refused the request.
type Refused struct{ Err error }

func (r *Refused) Error() string { return r.Err.Error() }
func (r *Refused) Unwrap() error { return r.Err }

// IsRefused: err is a *Refused.
func IsRefused(err error) bool {
	var r *Refused
	return errors.As(err, &r)
}

// Controller turns the Application objects of the control namespace, and
// of the namespaces AppNamespaces lists, into Ferry's apps. Of several
// controllers on one cluster, the one holding the Lease works; the others
// wait to take over.
type Controller struct {
	Objects *Objects
	Kube    kubernetes.Interface
	Apps    Apps
	// Definitions, when set, are the projects and ApplicationSets that the
	// control namespace's AppProject and ApplicationSet objects are.
	Definitions Definitions
	// Namespace is the control namespace; its apps are named as their objects.
	Namespace string
	// AppNamespaces are globs of the other namespaces whose objects are
	// apps, called namespace/name (Argo CD's application.namespaces).
	// Empty: the control namespace alone is watched.
	AppNamespaces []string
	// Identity names this controller in the Lease.
	Identity string
	// Workers reconcile this many objects at once (default 8).
	Workers int

	indexer cache.Indexer
	queue   workqueue.TypedRateLimitingInterface[string]
	mu      sync.Mutex
	// applied: the specDigest last sent to each object's app.
	applied map[string]string
	// handed: the operation (as JSON) last handed to each object's app,
	// until the cache shows the object without it.
	handed map[string]string
	// ignored: the namespaces whose objects were found unlisted, said once.
	ignored sync.Map
	// leading: the cache and queue of the lead under way, else nil; with mu.
	leading *lead
}

// lead is what Revalidate needs of the lead under way.
type lead struct {
	indexer cache.Indexer
	queue   workqueue.TypedRateLimitingInterface[string]
}

// LeaseName is the Lease the controllers of one control cluster share.
const LeaseName = "ferry-applications"

// Leader election timing: a controller that died is replaced after at
// most leaseDuration.
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
	// checkEvery: how often a controller that cannot reach the control
	// cluster, or finds no Application CRD there, looks again.
	checkEvery = 30 * time.Second
)

// Run works until ctx ends: it waits for the control cluster and its
// Application CRD (saying so once), then for the Lease, and reconciles
// while it holds it.
func (c *Controller) Run(ctx context.Context) {
	c.waitForCRD(ctx)
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: c.Namespace},
		Client:     c.Kube.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
			ReleaseOnCancel: true, Name: LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: c.lead,
				OnStoppedLeading: func() { slog.Info("applications: not the leader any more", "identity", c.Identity) },
			},
		})
		if err != nil {
			slog.Error("applications: leader election", "error", err)
			return
		}
		le.Run(ctx)
	}
}

// waitForCRD returns once the Application objects of the control namespace
// can be listed, or ctx ends.
func (c *Controller) waitForCRD(ctx context.Context) {
	said := false
	for {
		_, err := c.Objects.Client.Resource(Applications).Namespace(c.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil || ctx.Err() != nil {
			if said && err == nil {
				slog.Info("applications: the control cluster answers now")
			}
			return
		}
		if !said {
			slog.Error("applications: cannot list Application objects in the control cluster; install the CRDs (kubectl apply --server-side -k deploy/crds) and check --control-context; trying again every 30s",
				"namespace", c.Namespace, "error", err)
			said = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(checkEvery):
		}
	}
}

// lead reconciles while this controller holds the Lease.
func (c *Controller) lead(ctx context.Context) {
	slog.Info("applications: leading", "namespace", c.Namespace, "app-namespaces", c.AppNamespaces, "identity", c.Identity)
	watched := c.Namespace
	if len(c.AppNamespaces) > 0 {
		watched = metav1.NamespaceAll
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.Objects.Client, 0, watched, nil)
	informer := factory.ForResource(Applications).Informer()
	c.indexer = informer.GetIndexer()
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "applications"})
	defer c.queue.ShutDown()
	c.mu.Lock()
	c.applied = map[string]string{} // another leader may have sent specs since
	c.handed = map[string]string{}
	c.mu.Unlock()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil && c.listed(key) {
			c.queue.Add(key)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		slog.Error("applications: watch", "error", err)
		return
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return
	}
	c.enqueueOrphans(ctx)
	c.mu.Lock()
	c.leading = &lead{indexer: c.indexer, queue: c.queue}
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.leading = nil
		c.mu.Unlock()
	}()
	workers := c.Workers
	if workers <= 0 {
		workers = 8
	}
	var wg sync.WaitGroup
	c.watchDefinitions(ctx, &wg)
	for range workers {
		wg.Go(func() {
			for c.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

// Revalidate reads again every object whose spec was found invalid: what
// it was checked against changed (a cluster Secret added a region). A
// controller that does not lead does nothing: its next lead reads all.
func (c *Controller) Revalidate() {
	c.mu.Lock()
	l := c.leading
	c.mu.Unlock()
	if l == nil {
		return
	}
	for _, item := range l.indexer.List() {
		u, ok := item.(*unstructured.Unstructured)
		if !ok || !slices.Contains(conditionsOf(u), ConditionInvalidSpec) {
			continue
		}
		if key, err := cache.MetaNamespaceKeyFunc(u); err == nil && c.listed(key) {
			l.queue.Add(key)
		}
	}
}

// enqueueOrphans queues the apps whose objects went while no controller
// watched: their reconcile deletes them.
func (c *Controller) enqueueOrphans(ctx context.Context) {
	owned, err := c.Apps.Owned(ctx)
	if err != nil {
		slog.Warn("applications: cannot list the apps objects own; an object deleted while no controller ran keeps its app until the next leader looks", "error", err)
		return
	}
	for name, ns := range owned {
		key := c.objectKey(name)
		if objNS, _, _ := splitKey(key); objNS != ns || !c.watches(ns) {
			continue // another control namespace's, or a namespace not listed
		}
		if _, exists, _ := c.indexer.GetByKey(key); !exists {
			c.queue.Add(key)
		}
	}
}

// next reconciles the next key of the queue; false once the queue shut down.
func (c *Controller) next(ctx context.Context) bool {
	return work(ctx, c.queue, "Application", c.reconcile)
}

// work hands the next key of queue to reconcile, which may ask to be
// called again after a while; a failed one is retried with backoff. false
// once the queue shut down.
func work(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], kind string,
	reconcile func(context.Context, string) (time.Duration, error)) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	again, err := reconcile(ctx, key)
	switch {
	case err != nil && ctx.Err() == nil:
		slog.Warn("applications: reconcile failed, retrying", "kind", kind, "object", key, "error", err)
		queue.AddRateLimited(key)
	case again > 0:
		queue.Forget(key)
		queue.AddAfter(key, again)
	default:
		queue.Forget(key)
	}
	return true
}
