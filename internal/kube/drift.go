package kube

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// Drift is a change to a tracked object that Ferry did not make: an edit,
// a scale, a delete by someone or something else. The live cache reports
// it at once, so that an app with selfHeal is put back in seconds.
type Drift struct {
	// App is the Application that tracks the object.
	App string
	// Key names the object.
	Key app.ResourceKey
	// By names the field managers that made the change, or "deleted", or
	// "health" for a change of status alone that changed its health.
	By []string
}

// DriftHealth is what Drift.By says of a change of status alone that
// changed the object's health.
const DriftHealth = "health"

// updated reports a change to a tracked object unless it is only what the
// server manages (status, metadata bookkeeping) or Ferry's own write. A
// change of status alone is reported (by "health") when it changes the
// object's health from what the last compare reported (NoteCompared).
func (l *liveCache) updated(li *liveInformer, oldObj, curObj any) {
	prev, ok1 := oldObj.(*unstructured.Unstructured)
	cur, ok2 := curObj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return
	}
	appName := trackedBy(cur)
	cur = withKind(cur, li)
	if !IsTracked(appName, cur) || syncplan.IsHook(cur) || prev.GetResourceVersion() == cur.GetResourceVersion() {
		return // hooks come and go with the hook runner
	}
	if reflect.DeepEqual(diff.Normalize(prev), diff.Normalize(cur)) {
		if l.healthChanged(appName, cur) {
			l.onDrift(Drift{App: appName, Key: KeyOf(cur), By: []string{DriftHealth}})
		}
		return
	}
	l.driftUnlessOurs(appName, cur, changedBy(prev, cur))
}

// driftUnlessOurs signals a change of obj by the field managers in by,
// less Ferry's own, unless the change is only Ferry's write (by names
// only Ferry, or names no one and the version is one Ferry wrote).
func (l *liveCache) driftUnlessOurs(appName string, obj *unstructured.Unstructured, by []string) {
	key := KeyOf(obj)
	others := by[:0:0]
	for _, m := range by {
		if m != l.c.opts.FieldManager {
			others = append(others, m)
		}
	}
	switch {
	case len(by) > 0 && len(others) == 0:
		return // Ferry's own write
	case len(by) == 0 && l.c.writes.ours(key, obj.GetResourceVersion()):
		return
	}
	l.onDrift(Drift{App: appName, Key: key, By: others})
}

// deleted reports the deletion of a tracked object that Ferry did not
// delete (prune, app delete, re-create).
func (l *liveCache) deleted(li *liveInformer, obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}

	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	u = withKind(u, li)
	appName := trackedBy(u)
	if !IsTracked(appName, u) || syncplan.IsHook(u) {
		return
	}
	l.forgetHealth(appName, u)
	if l.c.writes.deletedByUs(KeyOf(u)) {
		return
	}
	l.onDrift(Drift{App: appName, Key: KeyOf(u), By: []string{"deleted"}})
}

// changedBy names the managers whose managedFields entries are new or have
// a new time in cur: the API server stamps only the entry of the manager
// that made a write, so these are who changed the object.
func changedBy(prev, cur *unstructured.Unstructured) []string {
	type id struct{ manager, op, sub string }
	before := map[id]*metav1.Time{}
	for _, e := range prev.GetManagedFields() {
		before[id{e.Manager, string(e.Operation), e.Subresource}] = e.Time
	}
	var out []string
	for _, e := range cur.GetManagedFields() {
		t, seen := before[id{e.Manager, string(e.Operation), e.Subresource}]
		if e.Subresource == "status" {
			continue
		}
		if !seen || (e.Time != nil && (t == nil || !t.Equal(e.Time))) {
			out = append(out, e.Manager)
		}
	}
	return out
}

func withKind(u *unstructured.Unstructured, li *liveInformer) *unstructured.Unstructured {
	if u.GetKind() != "" {
		return u
	}
	u = u.DeepCopy()
	u.SetGroupVersionKind(li.gvk)
	return u
}
