package kube

import (
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// writeMemory is how long writeLog remembers a write or a delete.
const writeMemory = 10 * time.Minute

// writeLog remembers the objects Ferry wrote (with the resourceVersion the
// write returned) and deleted. The live cache uses it never to answer with
// an object older than Ferry's own last write, and drift detection to tell
// Ferry's own changes from others'.
type writeLog struct {
	mu      sync.Mutex
	written map[app.ResourceKey]writeEntry
	deleted map[app.ResourceKey]time.Time
	// swept: when sweep last passed over the maps.
	swept time.Time
}

type writeEntry struct {
	rv uint64
	at time.Time
}

func newWriteLog() *writeLog {
	return &writeLog{written: map[app.ResourceKey]writeEntry{}, deleted: map[app.ResourceKey]time.Time{}}
}

func (w *writeLog) wrote(key app.ResourceKey, obj *unstructured.Unstructured) {
	rv, _ := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sweep()
	w.written[identity(key)] = writeEntry{rv: rv, at: time.Now()}
}

func (w *writeLog) deleting(key app.ResourceKey) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sweep()
	w.deleted[identity(key)] = time.Now()
}

// current tells whether a cached copy of the object at resourceVersion rv
// ("" when the cache has none) is at least as new as Ferry's last write of
// it. resourceVersions are compared as numbers, which holds for etcd's;
// one that is not a number is never trusted.
func (w *writeLog) current(key app.ResourceKey, rv string) bool {
	w.mu.Lock()
	e, wrote := w.written[identity(key)]
	w.mu.Unlock()
	if !wrote || time.Since(e.at) > writeMemory {
		return true
	}
	if rv == "" {
		return false // written a moment ago, not in the cache yet
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	return err == nil && n >= e.rv
}

// ours tells whether the object's version rv is the one Ferry's last write
// made.
func (w *writeLog) ours(key app.ResourceKey, rv string) bool {
	n, err := strconv.ParseUint(rv, 10, 64)
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.written[identity(key)]
	return ok && err == nil && n == e.rv
}

// deletedByUs tells whether Ferry deleted the object lately.
func (w *writeLog) deletedByUs(key app.ResourceKey) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.deleted[identity(key)]
	return ok && time.Since(at) < writeMemory
}

// sweepEvery: sweep passes over the maps at most this often, so that a
// write costs the same however many objects the last writeMemory wrote
// (a pass on every write, as before, was 6 % of a worker's CPU onboarding
// 5,000 apps, and grew with the fleet).
const sweepEvery = writeMemory / 10

// sweep drops what is older than writeMemory; called with mu held, it
// passes over the maps only when they have grown, once per sweepEvery.
func (w *writeLog) sweep() {
	if len(w.written)+len(w.deleted) < 4096 {
		return
	}
	now := time.Now()
	if now.Sub(w.swept) < sweepEvery {
		return
	}
	w.swept = now
	for k, e := range w.written {
		if now.Sub(e.at) > writeMemory {
			delete(w.written, k)
		}
	}
	for k, at := range w.deleted {
		if now.Sub(at) > writeMemory {
			delete(w.deleted, k)
		}
	}
}
