package kube

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// Watching reports whether the live cache sees every change to the objects
// of a compare of objs (and of the kinds of inventory, where tracked objects
// no longer desired are looked for): the cache is on with a drift
// listener, and the informer of every one of those kinds has synced. Ask
// before the compare: a compare that read an unsynced kind from the API
// server could miss a change made before the informer's first list. When
// true, every later change that Ferry does not make (an edit, a delete, a
// new object with the app's label, a health transition since the compare:
// see NoteCompared) reaches the drift listener, so the app's workflow may
// leave its next polls without a compare.
func (c *Cluster) Watching(objs []*unstructured.Unstructured, inventory []app.ResourceKey) bool {
	l := c.live()
	if l == nil || l.onDrift == nil {
		return false
	}
	var desired []*unstructured.Unstructured
	for _, o := range objs {
		if !syncplan.IsHook(o) {
			desired = append(desired, o)
		}
	}
	for _, gk := range kindsOf(desired, inventory) {
		m, err := c.mapping(gk.WithVersion(""))
		if err != nil || l.synced(m) == nil {
			return false
		}
	}
	return true
}

// NoteCompared remembers the health a compare reported for each of the
// app's objects, so that a later change of status alone (a Deployment that
// becomes Degraded without a spec change) that changes it is reported as a
// Drift by "health", once per change of health. Ferry's own writes since
// the compare (a sync, whose rollout changes health on its way) silence
// it until the next compare; a sync notes the state it reports after its
// writes, so that the end of the rollout it started (Progressing to
// Healthy) is signalled and the app need not wait for its settle poll.
func (c *Cluster) NoteCompared(appName string, states []ResourceState) {
	l := c.live()
	if l == nil || l.onDrift == nil {
		return
	}
	now := time.Now()
	l.healthMu.Lock()
	defer l.healthMu.Unlock()
	if l.health == nil {
		l.health = map[cacheKey]notedHealth{}
	}
	for _, st := range states {
		k := cacheKey{app: appName, key: identity(st.Key)}
		if st.Health == "" || st.Health == app.HealthMissing {
			delete(l.health, k)
			continue
		}
		l.health[k] = notedHealth{code: st.Health, at: now}
	}
}

// notedHealth is the health a compare reported of an object, and when.
type notedHealth struct {
	code app.HealthStatusCode
	at   time.Time
}

// healthChanged tells whether cur's health differs from what the last
// compare reported of it, and remembers the new one.
func (l *liveCache) healthChanged(appName string, cur *unstructured.Unstructured) bool {
	k := cacheKey{app: appName, key: identity(KeyOf(cur))}
	l.healthMu.Lock()
	defer l.healthMu.Unlock()
	noted, ok := l.health[k]
	if !ok {
		return false
	}
	if l.c.writes.wroteSince(k.key, noted.at) {
		delete(l.health, k)
		return false
	}
	now, _ := l.c.opts.Health.Get(cur)
	if now == noted.code {
		return false
	}
	l.health[k] = notedHealth{code: now, at: noted.at}
	return true
}

// wroteSince tells whether Ferry wrote or deleted the object after t.
func (w *writeLog) wroteSince(key app.ResourceKey, t time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, wrote := w.written[identity(key)]
	d, deleted := w.deleted[identity(key)]
	return (wrote && e.at.After(t)) || (deleted && d.After(t))
}

// forgetHealth drops what a compare reported of a deleted object.
func (l *liveCache) forgetHealth(appName string, u *unstructured.Unstructured) {
	l.healthMu.Lock()
	defer l.healthMu.Unlock()
	delete(l.health, cacheKey{app: appName, key: identity(KeyOf(u))})
}

// added reports an object with the app's label that someone else created
// after the informer's first list: a compare that found it missing, or
// did not know it, is out of date. Of the first list it reports a health
// that differs from what a compare noted before: the informer of a kind
// starts with the first compare or sync that needs it (a CRD's objects:
// once the CRD is served) and lists later, so a change of status made
// meanwhile came with no update to report it.
func (l *liveCache) added(li *liveInformer, obj any, initial bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	u = withKind(u, li)
	appName := trackedBy(u)
	switch {
	case !IsTracked(appName, u) || syncplan.IsHook(u):
	case !initial:
		l.driftUnlessOurs(appName, u, changedBy(&unstructured.Unstructured{}, u))
	case l.healthChanged(appName, u):
		l.onDrift(Drift{App: appName, Key: KeyOf(u), By: []string{DriftHealth}})
	}
}
