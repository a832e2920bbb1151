package kube

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// Delete deletes the objects named by keys that are appName's (by tracking
// id), with background propagation, and returns the keys it deleted. An
// object that is missing or not the app's is skipped, and so is one whose
// sync options say Delete=false. It returns once the deletes are issued:
// poll Remaining to see them go.
func (c *Cluster) Delete(ctx context.Context, appName string, keys []app.ResourceKey) ([]app.ResourceKey, error) {
	if err := validAppName(appName); err != nil {
		return nil, err
	}
	objs, errs := c.getTracked(ctx, appName, keys)
	changes, derrs := c.deleteObjects(ctx, keepDeleteFalse(objs), "delete", app.PropagationBackground)
	return deletedKeys(changes), objectErrors(append(errs, derrs...))
}

// DeleteAll deletes every object of appName among the kinds gvks (their
// versions are ignored) or, with none given, among every kind the cluster
// serves that can be listed and deleted: what an Application's cascading
// deletion needs. Each is deleted with the propagation policy named
// (app.PropagationForeground, as Argo CD's resources finalizer asks: an
// object goes once what it owns has gone; empty means background). It
// returns the keys it deleted once the deletes are issued. Kinds whose API
// group cannot be discovered are skipped and reported in the error, so the
// caller retries. Objects marked Delete=false stay.
func (c *Cluster) DeleteAll(ctx context.Context, appName, propagation string, gvks ...schema.GroupVersionKind) ([]app.ResourceKey, error) {
	deleted, _, err := c.deleteAll(ctx, appName, propagation, true, gvks)
	return deleted, err
}

// DeleteAllConfirmed is DeleteAll for an app's cascading delete, which
// objects marked Delete=confirm hold back, as in Argo CD: unless confirmed,
// when any of the app's objects is so marked, nothing is deleted and the
// marked ones are returned as awaiting confirmation.
func (c *Cluster) DeleteAllConfirmed(ctx context.Context, appName, propagation string, confirmed bool) (deleted, awaiting []app.ResourceKey, err error) {
	return c.deleteAll(ctx, appName, propagation, confirmed, nil)
}

func (c *Cluster) deleteAll(ctx context.Context, appName, propagation string, confirmed bool,
	gvks []schema.GroupVersionKind) (deleted, awaiting []app.ResourceKey, err error) {
	if err := validAppName(appName); err != nil {
		return nil, nil, err
	}
	var kinds []schema.GroupKind
	var discoveryErr error
	if len(gvks) == 0 {
		kinds, discoveryErr = c.deletableKinds()
	} else {
		for _, gvk := range gvks {
			kinds = append(kinds, gvk.GroupKind())
		}
	}
	if ex := c.opts.Excluded; ex != nil {
		kinds = slices.DeleteFunc(kinds, func(gk schema.GroupKind) bool { return ex(gk.Group, gk.Kind) })
	}
	objs, errs := c.listTracked(ctx, appName, kinds)
	objs = keepDeleteFalse(objs)
	if !confirmed {
		if awaiting = deleteConfirm(objs); len(awaiting) > 0 {
			return nil, awaiting, errors.Join(discoveryErr, objectErrors(errs))
		}
	}
	changes, derrs := c.deleteObjects(ctx, objs, "delete", cmp.Or(propagation, app.PropagationBackground))
	err = objectErrors(append(errs, derrs...))
	return deletedKeys(changes), nil, errors.Join(discoveryErr, err)
}

// deleteConfirm are the keys of the objects marked Delete=confirm.
func deleteConfirm(objs []*unstructured.Unstructured) []app.ResourceKey {
	var keys []app.ResourceKey
	for _, obj := range objs {
		opts, err := app.ParseSyncOptionsAnnotation(obj.GetAnnotations()[app.AnnotationSyncOptions])
		if err == nil && opts.DeleteConfirm {
			keys = append(keys, KeyOf(obj))
		}
	}
	return keys
}

// Remaining returns the keys whose objects still exist and are appName's:
// poll it after Delete or DeleteAll until it is empty.
func (c *Cluster) Remaining(ctx context.Context, appName string, keys []app.ResourceKey) ([]app.ResourceKey, error) {
	objs, errs := c.getTracked(ctx, appName, keys)
	out := make([]app.ResourceKey, len(objs))
	for i, o := range objs {
		out[i] = KeyOf(o)
	}
	return out, objectErrors(errs)
}

// getTracked gets the objects named by keys, keeping those that exist and
// are appName's, in the order of keys.
func (c *Cluster) getTracked(ctx context.Context, appName string, keys []app.ResourceKey) ([]*unstructured.Unstructured, []*ObjectError) {
	found := make([]*unstructured.Unstructured, len(keys))
	failures := make([]*ObjectError, len(keys))
	runLimited(c.opts.Concurrency, len(keys), func(i int) {
		key := keys[i]
		m, err := c.mapping(schema.GroupVersionKind{Group: key.Group, Version: key.Version, Kind: key.Kind})
		if err != nil && key.Version != "" {
			// The version may no longer be served; any version names the object.
			m, err = c.mapping(schema.GroupVersionKind{Group: key.Group, Kind: key.Kind})
		}
		if err != nil {
			if !meta.IsNoMatchError(err) {
				failures[i] = newObjectError(key, "get", err)
			}
			return
		}
		obj, err := c.resource(m, key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			failures[i] = newObjectError(key, "get", err)
		case IsTracked(appName, obj):
			found[i] = obj
		}
	})
	var objs []*unstructured.Unstructured
	var errs []*ObjectError
	for i := range keys {
		if found[i] != nil {
			objs = append(objs, found[i])
		}
		if failures[i] != nil {
			errs = append(errs, failures[i])
		}
	}
	return objs, errs
}

// deletableKinds returns every kind the cluster serves that supports list
// and delete, from fresh discovery.
func (c *Cluster) deletableKinds() ([]schema.GroupKind, error) {
	c.mapper.Reset()
	lists, err := c.discovery.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, err
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists)
	var kinds []schema.GroupKind
	seen := map[schema.GroupKind]bool{}
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			gk := schema.GroupKind{Group: gv.Group, Kind: r.Kind}
			if strings.Contains(r.Name, "/") || seen[gk] {
				continue // a subresource, or a kind seen in another version
			}
			seen[gk] = true
			kinds = append(kinds, gk)
		}
	}
	return kinds, err
}

func deletedKeys(changes []Change) []app.ResourceKey {
	var keys []app.ResourceKey
	for _, ch := range changes {
		if ch.Action != ActionFailed {
			keys = append(keys, ch.Key)
		}
	}
	return keys
}

// keepDeleteFalse drops the objects whose sync options say Delete=false.
func keepDeleteFalse(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		opts, err := app.ParseSyncOptionsAnnotation(obj.GetAnnotations()[app.AnnotationSyncOptions])
		if err == nil && opts.DeleteFalse {
			continue
		}
		out = append(out, obj)
	}
	return out
}

// deleteObjects deletes objs in prune order (syncplan.BuildPrune: highest
// wave first, reverse kind order, hooks first of all), a step at a time,
// with the propagation policy given. It does not wait for them to go.
func (c *Cluster) deleteObjects(ctx context.Context, objs []*unstructured.Unstructured, op, propagation string) ([]Change, []*ObjectError) {
	p := syncplan.BuildPrune(objs)
	steps := [][]int{p.Hooks}
	for _, w := range p.Waves {
		steps = append(steps, w.Steps...)
	}
	policy := func(*unstructured.Unstructured) app.SyncOptions {
		return app.SyncOptions{PrunePropagationPolicy: propagation}
	}
	var (
		changes []Change
		errs    []*ObjectError
	)
	for _, step := range steps {
		group := make([]*unstructured.Unstructured, len(step))
		for i, idx := range step {
			group[i] = objs[idx]
		}
		ch, e := c.deleteGroup(ctx, group, false, op, policy)
		changes, errs = append(changes, ch...), append(errs, e...)
	}
	return changes, errs
}

// deleteGroup deletes objs in parallel, each with the propagation policy
// its options name and the UID it had when listed as a precondition, so an
// object recreated since is left alone. An object already gone is not
// reported. The returned Changes have Action "" on success, for the caller
// to name.
func (c *Cluster) deleteGroup(ctx context.Context, objs []*unstructured.Unstructured, dryRun bool, op string,
	optsOf func(*unstructured.Unstructured) app.SyncOptions) ([]Change, []*ObjectError) {
	results := make([]*Change, len(objs))
	failures := make([]*ObjectError, len(objs))
	runLimited(c.opts.Concurrency, len(objs), func(i int) {
		key := KeyOf(objs[i])
		if !dryRun {
			c.writes.deleting(key)
		}
		gone, err := c.deleteObject(ctx, objs[i], dryRun, optsOf(objs[i]).PropagationPolicy())
		switch {
		case err != nil:
			failures[i] = newObjectError(key, op, err)
		case !gone:
			msg := ""
			if dryRun {
				msg = "dry run"
			}
			results[i] = &Change{Key: key, Message: msg}
		}
	})
	var (
		changes []Change
		errs    []*ObjectError
	)
	for i := range objs {
		if failures[i] != nil {
			errs = append(errs, failures[i])
			changes = append(changes, Change{Key: failures[i].Key, Action: ActionFailed, Message: failures[i].message()})
		} else if results[i] != nil {
			changes = append(changes, *results[i])
		}
	}
	return changes, errs
}

// deleteObject deletes obj with the propagation policy (foreground,
// background or orphan); gone tells that it no longer existed.
func (c *Cluster) deleteObject(ctx context.Context, obj *unstructured.Unstructured, dryRun bool, policy string) (gone bool, err error) {
	m, err := c.mapping(obj.GroupVersionKind())
	if err != nil {
		return false, err
	}
	propagation := map[string]metav1.DeletionPropagation{
		app.PropagationForeground: metav1.DeletePropagationForeground,
		app.PropagationBackground: metav1.DeletePropagationBackground,
		app.PropagationOrphan:     metav1.DeletePropagationOrphan,
	}[policy]
	if propagation == "" {
		propagation = metav1.DeletePropagationBackground
	}
	uid := obj.GetUID()
	opts := metav1.DeleteOptions{PropagationPolicy: &propagation}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	ri, err := c.writeResource(ctx, m, obj.GetNamespace())
	if err != nil {
		return false, err
	}
	err = ri.Delete(ctx, obj.GetName(), opts)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}
