package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/ferry-gitops/ferry/internal/appobjects"
)

// objectWatch follows the Application objects of a control cluster's
// namespace, as `kubectl get applications -w` does, and notes when each
// first showed Synced and Healthy in its status.
type objectWatch struct {
	cancel context.CancelFunc
	once   sync.Once

	mu    sync.Mutex
	ready map[string]time.Time
}

// watchObjects starts watching the Applications of namespace ns of the
// control cluster.
func (e *Env) watchObjects(ctx context.Context, ns string) (*objectWatch, error) {
	w := &objectWatch{ready: map[string]time.Time{}}
	see := func(u *unstructured.Unstructured) {
		if !syncedAndHealthy(u.Object) {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, seen := w.ready[u.GetName()]; !seen {
			w.ready[u.GetName()] = time.Now()
		}
	}
	var err error
	w.cancel, err = e.inform(ctx, e.Stack.ControlContext, appobjects.Applications, ns, see)
	return w, err
}

// inform runs an informer of the objects of gvr in namespace ns of the
// cluster of kubeconfig context kctx, handing see every object added or
// updated, until the cancel it returns; it returns once the informer has
// listed them.
func (e *Env) inform(ctx context.Context, kctx string, gvr schema.GroupVersionResource, ns string, see func(*unstructured.Unstructured)) (context.CancelFunc, error) {
	rc, err := e.Stack.RestConfig(kctx)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, gvr, ns, 0, cache.Indexers{}, nil).Informer()
	handle := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			see(u)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(_, obj any) { handle(obj) },
	}); err != nil {
		cancel()
		return nil, err
	}
	go inf.RunWithContext(wctx)
	if !cache.WaitForCacheSync(wctx.Done(), inf.HasSynced) {
		cancel()
		return nil, fmt.Errorf("watch the %s of %s/%s: not listed", gvr.Resource, kctx, ns)
	}
	return cancel, nil
}

// syncedAndHealthy reads an Application object's status as `kubectl wait
// --for=jsonpath=…` would.
func syncedAndHealthy(obj map[string]any) bool {
	s, _, _ := unstructured.NestedString(obj, "status", "sync", "status")
	h, _, _ := unstructured.NestedString(obj, "status", "health", "status")
	return s == "Synced" && h == "Healthy"
}

// waitAll waits until want objects were seen Synced and Healthy and
// returns when the last of them was.
func (w *objectWatch) waitAll(ctx context.Context, want int) (time.Time, error) {
	for {
		w.mu.Lock()
		n := len(w.ready)
		var last time.Time
		for _, t := range w.ready {
			if t.After(last) {
				last = t
			}
		}
		w.mu.Unlock()
		if n >= want {
			return last, nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%d of %d Application objects showed Synced and Healthy: %w", n, want, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

func (w *objectWatch) stop() { w.once.Do(w.cancel) }
