package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
)

// applyOne writes t's object and records the Change, or the error, in t.
// Whether it was created, configured or unchanged comes from the object
// before (from the live cache when it is on: never older than Ferry's own
// last write; none, without asking, in a namespace the sync created) and
// the write's response: configured when the object (less what
// diff.Normalize drops) or Ferry's own managedFields entry changed. The
// resourceVersion is not used: a controller's status write between the Get
// and the apply bumps it, and would make a no-op look like a change.
func (c *Cluster) applyOne(ctx context.Context, t *task, req ApplyRequest, pending map[string]bool, empty *emptyNamespaces) {
	op := "apply"
	if req.DryRun {
		op = "dry-run apply"
		if pending[t.key.Namespace] {
			t.change = Change{Key: t.key, Action: ActionCreated, Message: "dry run: its namespace does not exist yet"}
			return
		}
	}
	existing, err := c.liveGetIn(ctx, t.mapping, t.key, empty)
	if err != nil {
		t.err = newObjectError(t.key, "get", err)
		return
	}
	shared := ""
	if existing != nil {
		if owner := trackedBy(existing); owner != "" && owner != t.app {
			if t.opts.FailOnSharedResource {
				t.err = sharedError(t, owner)
				return
			}
			shared = owner
		}
		if t.opts.ApplyOutOfSyncOnly {
			if st, err := c.compareLive(ctx, t, existing, req.Ignore); err == nil && st.Sync == app.SyncStatusSynced {
				t.change = Change{Key: t.key, Action: ActionSkipped, Message: "in sync: not applied (ApplyOutOfSyncOnly)"}
				t.inSync = true
				return
			}
		}
	}
	applied, err := c.write(ctx, t, existing, req.DryRun)
	if apierrors.IsConflict(err) && t.opts.Replace {
		// The cached copy was older than the object: PUT over the current one.
		if existing, err = c.getFresh(ctx, t); err == nil {
			applied, err = c.write(ctx, t, existing, req.DryRun)
		}
	}
	recreated := false
	if err != nil && existing != nil && t.opts.Force && IsImmutable(err) {
		if req.DryRun {
			t.change = Change{Key: t.key, Action: ActionConfigured, Message: "dry run: would be deleted and re-created (Force=true): " + newObjectError(t.key, op, err).Err.Error()}
			return
		}
		applied, err = c.recreate(ctx, t, existing)
		recreated = true
	}
	if err != nil {
		t.err = newObjectError(t.key, op, err)
		return
	}
	t.written = applied
	if !req.DryRun {
		c.writes.wrote(t.key, applied)
		c.rememberWritten(t, applied)
	}
	t.change = Change{Key: t.key}
	switch {
	case existing == nil:
		t.change.Action = ActionCreated
	case recreated:
		t.change.Action, t.change.Message = ActionConfigured, "deleted and re-created (Force=true): a changed field is immutable"
	default:
		changed := diff.Paths(diff.Normalize(existing), diff.Normalize(applied), c.opts.DiffDepth)
		if len(changed) == 0 && !c.ownershipChanged(existing, applied) {
			t.change.Action = ActionUnchanged
			break
		}
		t.change.Action = ActionConfigured
		if len(changed) > 0 {
			t.change.Message = "changed " + diff.Summarize(changed)
		}
		switch {
		case shared != "":
			t.change.Message = joinMessage(takenOver(shared), t.change.Message)
		case existing.GetAnnotations()[AnnotationTrackingID] == "":
			t.change.Message = joinMessage("adopted", t.change.Message)
		}
	}
	if req.DryRun {
		t.change.Message = joinMessage("dry run", t.change.Message)
	}
}

// rememberWritten records that the object Ferry has just written compares
// Synced at its new resourceVersion: a dry run of the same write against it
// would return it unchanged, so the compare after a sync sends none for an
// object nobody has touched since.
func (c *Cluster) rememberWritten(t *task, written *unstructured.Unstructured) {
	ck := cacheKey{app: t.app, key: identity(t.key)}
	cv := cacheVersion{desired: t.digest(), uid: string(written.GetUID()), rules: t.ignore.Digest()}
	c.results.put(ck, cv, written, cachedResult{sync: app.SyncStatusSynced})
}

// write sends t's object: a server-side apply, or with Replace=true a
// create or a PUT over existing. Validate=false turns the API server's
// strict field validation (unknown and duplicate fields are errors) off.
// RespectIgnoreDifferences keeps what the app's ignoreDifferences ignore as
// it is live (diff.Rules.Respect).
func (c *Cluster) write(ctx context.Context, t *task, existing *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	ri, err := c.writeResource(ctx, t.mapping, t.key.Namespace)
	if err != nil {
		return nil, err
	}
	validation := metav1.FieldValidationStrict
	if t.opts.ValidateFalse {
		validation = metav1.FieldValidationIgnore
	}
	var dry []string
	if dryRun {
		dry = []string{metav1.DryRunAll}
	}
	obj := t.obj
	if t.opts.RespectIgnoreDifferences && existing != nil && !t.ignore.Empty() {
		obj = obj.DeepCopy()
		t.ignore.Respect(existing, obj.Object)
	}
	if t.opts.Replace {
		obj := obj.DeepCopy()
		if existing == nil {
			return ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: c.opts.FieldManager, FieldValidation: validation, DryRun: dry})
		}
		obj.SetResourceVersion(existing.GetResourceVersion())
		return ri.Update(ctx, obj, metav1.UpdateOptions{FieldManager: c.opts.FieldManager, FieldValidation: validation, DryRun: dry})
	}
	if t.opts.ValidateFalse {
		if obj, err = c.withoutUnknownFields(ctx, t, obj, existing); err != nil {
			return nil, err
		}
	}
	body, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, invalidf("encode: %v", err)
	}
	force := true
	apply := func() (*unstructured.Unstructured, error) {
		return ri.Patch(ctx, t.key.Name, types.ApplyPatchType, body, metav1.PatchOptions{
			FieldManager: c.opts.FieldManager, Force: &force, FieldValidation: validation, DryRun: dry,
		})
	}
	applied, err := apply()
	if err != nil || dryRun || !hasFormerAppliers(applied) {
		return applied, err
	}
	// Argo CD (or kubectl) applied it before: its fields become Ferry's, and
	// the apply again removes those Ferry does not set (takeover.go).
	if _, err := c.takeOver(ctx, ri, applied); err != nil {
		return nil, fmt.Errorf("take over the fields of its former appliers: %w", err)
	}
	return apply()
}

// recreate deletes existing (in the foreground, with its UID as a
// precondition), waits until it is gone, and creates t's object anew.
func (c *Cluster) recreate(ctx context.Context, t *task, existing *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	c.writes.deleting(t.key)
	if _, err := c.deleteObject(ctx, existing, false, app.PropagationForeground); err != nil {
		return nil, fmt.Errorf("delete to re-create (Force=true): %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, c.opts.WaveTimeout)
	defer cancel()
	err := Poll(wctx, c.opts.HealthPoll/2, func(ctx context.Context) (bool, error) {
		live, err := c.resource(t.mapping, t.key.Namespace).Get(ctx, t.key.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err) || (err == nil && live.GetUID() != existing.GetUID()), nil
	})
	if err != nil {
		return nil, fmt.Errorf("re-create (Force=true): the old object is still being deleted: %w", err)
	}
	return c.write(ctx, t, nil, false)
}

// getFresh gets t's live object from the API server itself: a sync decides
// on what is there now. Nil when it does not exist.
func (c *Cluster) getFresh(ctx context.Context, t *task) (*unstructured.Unstructured, error) {
	live, err := c.resource(t.mapping, t.key.Namespace).Get(ctx, t.key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// ensureNamespace creates the destination namespace when it is missing. It
// returns nil when the namespace exists.
func (c *Cluster) ensureNamespace(ctx context.Context, name string, dryRun bool) (*Change, *ObjectError) {
	key := app.ResourceKey{Version: "v1", Kind: "Namespace", Name: name}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	m, err := c.mapping(ns.GroupVersionKind())
	if err != nil {
		return nil, newObjectError(key, "create namespace", err)
	}
	if _, err := c.resource(m, "").Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil, nil
	} else if !apierrors.IsNotFound(err) {
		return nil, newObjectError(key, "get", err)
	}
	ri, err := c.writeResource(ctx, m, "")
	if err != nil {
		return nil, newObjectError(key, "create namespace", err)
	}
	opts := metav1.ApplyOptions{FieldManager: c.opts.FieldManager, Force: true}
	msg := "destination namespace (CreateNamespace); not pruned with the app"
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
		msg = joinMessage("dry run", msg)
	}
	if _, err := ri.Apply(ctx, name, ns, opts); err != nil {
		return nil, newObjectError(key, "create namespace", err)
	}
	return &Change{Key: key, Action: ActionCreated, Message: msg}, nil
}

// ownershipChanged tells whether the apply changed the managedFields entry
// of Ferry's own apply: the fields it owns, or their time, which the API
// server bumps only on a write.
func (c *Cluster) ownershipChanged(before, after *unstructured.Unstructured) bool {
	return !reflect.DeepEqual(c.ownEntry(before), c.ownEntry(after))
}

func (c *Cluster) ownEntry(obj *unstructured.Unstructured) *metav1.ManagedFieldsEntry {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == c.opts.FieldManager && e.Subresource == "" &&
			(e.Operation == metav1.ManagedFieldsOperationApply || e.Operation == metav1.ManagedFieldsOperationUpdate) {
			return &e
		}
	}
	return nil
}
