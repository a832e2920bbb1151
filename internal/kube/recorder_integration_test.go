package kube_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/health"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// recorder watches the objects labelled for one app and records, by
// "Kind/name", the resourceVersion at which each appeared, first became
// Healthy, and was deleted. Every kind lives in the same etcd, so these
// numbers order events across kinds: they prove the order of a sync from
// the API server itself.
type recorder struct {
	mu      sync.Mutex
	added   map[string]uint64
	healthy map[string]uint64
	deleted map[string]uint64
}

func (e *env) record(appName string, gvrs ...schema.GroupVersionResource) *recorder {
	e.t.Helper()
	r := &recorder{added: map[string]uint64{}, healthy: map[string]uint64{}, deleted: map[string]uint64{}}
	ctx, cancel := context.WithCancel(e.ctx)
	e.t.Cleanup(cancel)
	selector := kube.LabelApp + "=" + appName
	for _, gvr := range gvrs {
		list, err := e.dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: selector})
		require.NoError(e.t, err)
		w, err := e.dyn.Resource(gvr).Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.GetResourceVersion()})
		require.NoError(e.t, err)
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				obj, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				r.note(ev.Type, obj)
			}
		}()
	}
	return r
}

func (r *recorder) note(typ watch.EventType, obj *unstructured.Unstructured) {
	rv, _ := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	name := obj.GetKind() + "/" + obj.GetName()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch typ {
	case watch.Added:
		if _, seen := r.added[name]; !seen {
			r.added[name] = rv
		}
	case watch.Deleted:
		r.deleted[name] = rv
		return
	}
	if code, _ := health.Get(obj); code == app.HealthHealthy {
		if _, seen := r.healthy[name]; !seen {
			r.healthy[name] = rv
		}
	}
}

// get returns a recorded resourceVersion, waiting for the watch to catch up.
func (r *recorder) get(e *env, which func(*recorder) map[string]uint64, name string) uint64 {
	e.t.Helper()
	var rv uint64
	e.eventually("the watch to see "+name, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		v, ok := which(r)[name]
		rv = v
		return ok
	})
	return rv
}

func added(r *recorder) map[string]uint64   { return r.added }
func healthy(r *recorder) map[string]uint64 { return r.healthy }
func deleted(r *recorder) map[string]uint64 { return r.deleted }

// fixture reads testdata/<name>.yaml, replacing placeholders.
func fixture(t testing.TB, name string, replace ...string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	require.NoError(t, err)
	text := strings.NewReplacer(replace...).Replace(string(data))
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(text, "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		objs = append(objs, decode(t, doc))
	}
	return objs
}
