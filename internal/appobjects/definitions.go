package appobjects

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// The AppProject and ApplicationSet objects of the control namespace are
// Ferry's projects and ApplicationSets, as ferry project apply and ferry
// appset apply make them: an object created or changed is applied, one
// deleted is deleted. They have no status to write back.

var (
	// AppProjects is the resource of Argo CD's AppProject objects.
	AppProjects = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "appprojects"}
	// ApplicationSets is the resource of Argo CD's ApplicationSet objects.
	ApplicationSets = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets"}
)

// Definitions is what the controller asks of Ferry's projects and
// ApplicationSets; the worker implements it with Temporal. kind is
// "AppProject" or "ApplicationSet". An error wrapped in *Refused is an
// answer no retry changes (an invalid document, a delete refused while
// apps use the project).
type Definitions interface {
	// Apply reads and validates doc, the object as JSON, and applies it.
	Apply(ctx context.Context, kind string, doc []byte) error
	// Delete deletes the project or ApplicationSet name.
	Delete(ctx context.Context, kind, name string) error
}

// definitionKind is one kind of definition objects the leader watches.
type definitionKind struct {
	kind string
	gvr  schema.GroupVersionResource
}

var definitionKinds = []definitionKind{{"AppProject", AppProjects}, {"ApplicationSet", ApplicationSets}}

// watchDefinitions mirrors the definition objects of the control namespace
// while ctx lasts; a kind the control cluster does not serve is logged and
// left out.
func (c *Controller) watchDefinitions(ctx context.Context, wg *sync.WaitGroup) {
	if c.Definitions == nil {
		return
	}
	for _, k := range definitionKinds {
		m := &definitionMirror{c: c, definitionKind: k, applied: map[string]string{}}
		wg.Go(func() { m.run(ctx) })
	}
}

// definitionMirror mirrors the objects of one kind.
type definitionMirror struct {
	definitionKind
	c       *Controller
	indexer cache.Indexer
	queue   workqueue.TypedRateLimitingInterface[string]
	// applied: the digest last applied (or refused) of each object.
	applied map[string]string
}

func (m *definitionMirror) run(ctx context.Context) {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(m.c.Objects.Client, 0, m.c.Namespace, nil)
	informer := factory.ForResource(m.gvr).Informer()
	m.indexer = informer.GetIndexer()
	m.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: m.gvr.Resource})
	defer m.queue.ShutDown()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			m.queue.Add(key)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		slog.Error("applications: watch", "resource", m.gvr.Resource, "error", err)
		return
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return
	}
	go func() { <-ctx.Done(); m.queue.ShutDown() }()
	for m.next(ctx) {
	}
}

func (m *definitionMirror) next(ctx context.Context) bool {
	return work(ctx, m.queue, m.kind, m.reconcile)
}

// reconcile applies the object of key when it changed, or deletes what it
// was once it is gone.
func (m *definitionMirror) reconcile(ctx context.Context, key string) (time.Duration, error) {
	_, name, err := splitKey(key)
	if err != nil {
		return 0, nil
	}
	item, exists, err := m.indexer.GetByKey(key)
	if err != nil {
		return 0, err
	}
	if !exists {
		delete(m.applied, key)
		err := m.c.Definitions.Delete(ctx, m.kind, name)
		if IsRefused(err) {
			// In use (a project of running apps): deleted once it is not.
			slog.Warn("applications: the object is gone, and what it made cannot be deleted yet; trying again", "kind", m.kind, "object", key, "error", err)
			return refusedAgain, nil
		}
		return 0, err
	}
	u := item.(*unstructured.Unstructured)
	if u.GetDeletionTimestamp() != nil {
		return 0, nil // its delete event comes once its finalizers are done
	}
	doc, err := json.Marshal(specOf(u))
	if err != nil {
		return 0, err
	}
	digest := specDigest(u)
	if m.applied[key] == digest {
		return 0, nil
	}
	err = m.c.Definitions.Apply(ctx, m.kind, doc)
	if IsRefused(err) {
		slog.Warn("applications: the object is refused; fix it and apply it again", "kind", m.kind, "object", key, "error", err)
		m.applied[key] = digest // said once per version of the object
		return 0, nil
	}
	if err == nil {
		m.applied[key] = digest
	}
	return 0, err
}
