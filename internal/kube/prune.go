package kube

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
)

// listPageSize bounds one list response.
const listPageSize = 500

// prune deletes the app's tracked objects, among the kinds of req.Objects
// and req.PreviousKeys, that are not in desired.
func (c *Cluster) prune(ctx context.Context, req ApplyRequest, desired map[app.ResourceKey]bool) ([]Change, []*ObjectError) {
	live, errs := c.listTracked(ctx, req.App, kindsOf(req.Objects, req.PreviousKeys))
	var stale []*unstructured.Unstructured
	for _, obj := range live {
		if !desired[identity(KeyOf(obj))] {
			stale = append(stale, obj)
		}
	}
	changes, derrs := c.deleteObjects(ctx, stale, req.DryRun, "prune")
	for i := range changes {
		if changes[i].Action != ActionFailed {
			changes[i].Action = ActionPruned
		}
	}
	return changes, append(errs, derrs...)
}

// kindsOf returns the group/kinds of objs and keys, each once.
func kindsOf(objs []*unstructured.Unstructured, keys []app.ResourceKey) []schema.GroupKind {
	seen := map[schema.GroupKind]bool{}
	var out []schema.GroupKind
	add := func(gk schema.GroupKind) {
		if gk.Kind != "" && !seen[gk] {
			seen[gk] = true
			out = append(out, gk)
		}
	}
	for _, o := range objs {
		add(o.GroupVersionKind().GroupKind())
	}
	for _, k := range keys {
		add(schema.GroupKind{Group: k.Group, Kind: k.Kind})
	}
	return out
}

// listTracked lists, in every namespace, the objects of kinds that carry
// appName's label, and keeps those whose tracking id is theirs. A kind the
// cluster no longer serves (its CRD is gone) has no objects.
func (c *Cluster) listTracked(ctx context.Context, appName string, kinds []schema.GroupKind) ([]*unstructured.Unstructured, []*ObjectError) {
	selector := labels.SelectorFromSet(labels.Set{LabelApp: appName}).String()
	var (
		mu   sync.Mutex
		out  []*unstructured.Unstructured
		errs []*ObjectError
	)
	runLimited(c.opts.Concurrency, len(kinds), func(i int) {
		gk := kinds[i]
		key := app.ResourceKey{Group: gk.Group, Kind: gk.Kind}
		m, err := c.mapping(gk.WithVersion(""))
		if meta.IsNoMatchError(err) {
			return
		}
		if err != nil {
			mu.Lock()
			errs = append(errs, newObjectError(key, "list", err))
			mu.Unlock()
			return
		}
		objs, err := c.listAll(ctx, m, selector)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
				errs = append(errs, newObjectError(key, "list", err))
			}
			return
		}
		for _, obj := range objs {
			if IsTracked(appName, obj) {
				out = append(out, obj)
			}
		}
	})
	return out, errs
}

// listAll lists m's resource across namespaces, page by page.
func (c *Cluster) listAll(ctx context.Context, m *meta.RESTMapping, selector string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{LabelSelector: selector, Limit: listPageSize}
	for {
		list, err := c.dynamic.Resource(m.Resource).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			obj := &list.Items[i]
			// Items of a list may leave out apiVersion and kind.
			obj.SetGroupVersionKind(m.GroupVersionKind)
			out = append(out, obj)
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// deleteObjects deletes objs in reverse apply order, a rank at a time, with
// background propagation and the UID each had when listed as a
// precondition, so an object recreated since is left alone. An object
// already gone is not reported. The returned Changes have Action "" on
// success, for the caller to name.
func (c *Cluster) deleteObjects(ctx context.Context, objs []*unstructured.Unstructured, dryRun bool, op string) ([]Change, []*ObjectError) {
	groups := groupByRank(objs)
	var (
		changes []Change
		errs    []*ObjectError
	)
	for gi := len(groups) - 1; gi >= 0; gi-- {
		group := groups[gi]
		results := make([]*Change, len(group))
		failures := make([]*ObjectError, len(group))
		runLimited(c.opts.Concurrency, len(group), func(i int) {
			key := KeyOf(group[i])
			gone, err := c.deleteObject(ctx, group[i], dryRun)
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
		for i := range group {
			if failures[i] != nil {
				errs = append(errs, failures[i])
				changes = append(changes, Change{Key: failures[i].Key, Action: ActionFailed, Message: failures[i].message()})
			} else if results[i] != nil {
				changes = append(changes, *results[i])
			}
		}
	}
	return changes, errs
}

// deleteObject deletes obj; gone tells that it no longer existed.
func (c *Cluster) deleteObject(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) (gone bool, err error) {
	m, err := c.mapping(obj.GroupVersionKind())
	if err != nil {
		return false, err
	}
	background := metav1.DeletePropagationBackground
	uid := obj.GetUID()
	opts := metav1.DeleteOptions{PropagationPolicy: &background}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	err = c.resource(m, obj.GetNamespace()).Delete(ctx, obj.GetName(), opts)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}
