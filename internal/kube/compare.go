package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/health"
)

// CompareRequest asks how far one cluster is from an Application's desired
// state. Its fields mean what ApplyRequest's do.
type CompareRequest struct {
	// App is the Application's name.
	App string
	// Namespace is the destination namespace for namespaced objects that
	// name none.
	Namespace string
	// Objects is the desired state; not modified.
	Objects []*unstructured.Unstructured
	// PreviousKeys are the objects the last sync applied; their kinds are
	// searched, with those of Objects, for tracked objects no longer desired.
	PreviousKeys []app.ResourceKey
}

// ResourceState is how one object compares.
type ResourceState struct {
	// Key names the object.
	Key app.ResourceKey
	// Sync is Synced, OutOfSync, or Unknown when it could not be compared.
	Sync app.SyncStatusCode
	// Health is the live object's health; Missing when it does not exist.
	Health app.HealthStatusCode
	// HealthMessage says why, from package health.
	HealthMessage string
	// Message summarises the difference: which paths differ ("differs at
	// spec.replicas"), that it is missing, or that it is no longer desired.
	// It never holds values.
	Message string
}

// Compare predicts, for every desired object, what applying it would make
// of the live object (a server-side dry-run apply under Ferry's field
// manager, so defaults, admission and other managers' fields are all
// accounted for), and compares that with the live object, less what the
// server manages (normalize). Equal is Synced; different or missing is
// OutOfSync. Tracked objects of the app that are no longer desired come
// after, OutOfSync: a sync with prune deletes them.
//
// States come in apply order. An object that cannot be compared has Sync
// Unknown and a Message; Compare then also returns an *ObjectErrors with
// every state it could compute.
func (c *Cluster) Compare(ctx context.Context, req CompareRequest) ([]ResourceState, error) {
	if err := validAppName(req.App); err != nil {
		return nil, err
	}
	objs := append([]*unstructured.Unstructured(nil), req.Objects...)
	sortObjects(objs)
	tasks := c.prepare(req.App, req.Namespace, objs)
	states := make([]ResourceState, len(tasks))
	runLimited(c.opts.Concurrency, len(tasks), func(i int) {
		if tasks[i].err == nil {
			states[i] = c.compareOne(ctx, tasks[i])
		}
	})

	var errs []*ObjectError
	desired := map[app.ResourceKey]bool{}
	for i, t := range tasks {
		desired[identity(t.key)] = true
		if t.err != nil {
			errs = append(errs, t.err)
			if states[i].Key.Kind == "" { // never sent: keep what compareOne learnt otherwise
				states[i] = ResourceState{Key: t.key, Health: app.HealthUnknown}
			}
			states[i].Sync, states[i].Message = app.SyncStatusUnknown, t.err.message()
		}
	}

	live, lerrs := c.listTracked(ctx, req.App, kindsOf(req.Objects, req.PreviousKeys))
	errs = append(errs, lerrs...)
	sortObjects(live)
	for _, obj := range live {
		key := KeyOf(obj)
		if desired[identity(key)] {
			continue
		}
		code, msg := health.Get(obj)
		states = append(states, ResourceState{
			Key: key, Sync: app.SyncStatusOutOfSync, Health: code, HealthMessage: msg,
			Message: "no longer desired: a sync with prune deletes it",
		})
	}
	return states, objectErrors(errs)
}

// compareOne compares t's object with the live one, or sets t.err.
func (c *Cluster) compareOne(ctx context.Context, t *task) ResourceState {
	st := ResourceState{Key: t.key, Sync: app.SyncStatusUnknown, Health: app.HealthUnknown}
	ri := c.resource(t.mapping, t.key.Namespace)
	live, err := ri.Get(ctx, t.key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		st.Sync, st.Health, st.Message = app.SyncStatusOutOfSync, app.HealthMissing, "missing"
		return st
	case err != nil:
		t.err = newObjectError(t.key, "get", err)
		return st
	}
	st.Health, st.HealthMessage = health.Get(live)
	predicted, err := ri.Apply(ctx, t.key.Name, t.obj, metav1.ApplyOptions{
		FieldManager: c.opts.FieldManager,
		Force:        true,
		DryRun:       []string{metav1.DryRunAll},
	})
	if err != nil {
		t.err = newObjectError(t.key, "dry-run apply", err)
		return st
	}
	paths := diffPaths(normalize(live), normalize(predicted), c.opts.DiffDepth)
	if len(paths) == 0 {
		st.Sync = app.SyncStatusSynced
		return st
	}
	st.Sync, st.Message = app.SyncStatusOutOfSync, "differs at "+summarizePaths(paths)
	if owner := trackedBy(live); owner != "" && owner != t.app {
		st.Message = joinMessage("tracked by Ferry application "+owner, st.Message)
	}
	return st
}
