package kube

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// extraneousState is how a tracked object that the app no longer desires
// compares, as Argo CD's CompareAppState has it: it is OutOfSync, and it
// makes the app OutOfSync unless its compare options say IgnoreExtraneous
// (then it counts as Synced). Its Prune sync option decides only what a
// sync does with it (Prune=false keeps it, Prune=confirm waits for a
// confirmation), never whether it counts: with Prune=false alone the app
// stays OutOfSync, as Argo CD's sync options page says.
func extraneousState(key app.ResourceKey, opts app.SyncOptions, ignore bool) ResourceState {
	st := ResourceState{Key: key, Sync: app.SyncStatusOutOfSync, RequiresPruning: true,
		Message: "no longer desired: a sync with prune deletes it"}
	switch {
	case opts.PruneFalse:
		st.Message = "no longer desired; kept by Prune=false"
	case opts.PruneConfirm:
		st.Message = "no longer desired: a sync with prune deletes it once confirmed (Prune=confirm: ferry app confirm)"
	}
	if ignore {
		st.CountsAs = app.SyncStatusSynced
		st.Message += "; not counted in the app's sync status (IgnoreExtraneous)"
	}
	return st
}

// prohibited is why the app's project does not permit t's object, or "".
// A kind whose scope is not known yet (its CRD comes with the app) is
// judged by the sync, which refuses it.
func prohibited(req CompareRequest, t *task) string {
	if req.Prohibits == nil || t.mapping == nil {
		return ""
	}
	return req.Prohibits(app.PlacedObject{Key: t.key, Known: true, Namespaced: t.mapping.Scope.Name() == meta.RESTScopeNameNamespace})
}

// prohibitedState is a desired object its project does not permit, shown
// as Argo CD shows such a managed resource: its live state is not read
// (Argo CD drops it), so its health is Missing; its sync status is
// Unknown, and it counts as OutOfSync for the app (a sync refuses it).
func prohibitedState(key app.ResourceKey, why string) ResourceState {
	return ResourceState{Key: key, Sync: app.SyncStatusUnknown, Health: app.HealthMissing, CountsAs: app.SyncStatusOutOfSync,
		Message: "not permitted by the app's project: " + why + "; not compared"}
}

// prohibitedLive is why the app's project does not permit the live obj, or "".
func prohibitedLive(req CompareRequest, obj *unstructured.Unstructured) string {
	if req.Prohibits == nil {
		return ""
	}
	return req.Prohibits(app.PlacedObject{Key: KeyOf(obj), Known: true, Namespaced: obj.GetNamespace() != ""})
}
