package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// listPageSize bounds one list response.
const listPageSize = 500

// staleObjects lists, once per sync, the app's tracked objects among the
// kinds of the request that are no longer desired. Hooks are not listed:
// their lifecycle is the hook runner's.
func (s *syncRun) staleObjects(ctx context.Context) []*unstructured.Unstructured {
	if s.staleKnown {
		return s.stale
	}
	s.staleKnown = true
	live, errs := s.c.listTracked(ctx, s.req.App, kindsOf(s.req.Objects, s.req.Inventory))
	for _, e := range errs {
		s.errs = append(s.errs, e)
		s.cs.add(Change{Key: e.Key, Action: ActionFailed, Message: e.message()})
	}
	want := s.desired()
	for _, obj := range live {
		if !want[identity(KeyOf(obj))] && !syncplan.IsHook(obj) {
			s.stale = append(s.stale, obj)
		}
	}
	return s.stale
}

// pruneOptions are the sync options of a live object: the app's, with the
// object's own annotation on top. An unreadable annotation keeps the app's.
func (s *syncRun) pruneOptions(obj *unstructured.Unstructured) app.SyncOptions {
	opts := s.req.Options
	if v, ok := obj.GetAnnotations()[app.AnnotationSyncOptions]; ok {
		if o, err := opts.WithAnnotation(v); err == nil {
			opts = o
		}
	}
	return opts
}

// prune deletes the stale objects: those marked Prune=false are reported
// skipped and kept; the others go from the highest wave down, each wave
// gone before the next is deleted; PruneLast ones last of all.
func (s *syncRun) prune(ctx context.Context) error {
	stale := s.staleObjects(ctx)
	if len(s.errs) > 0 {
		return objectErrors(s.errs)
	}
	var now, last []*unstructured.Unstructured
	for _, obj := range stale {
		switch opts := s.pruneOptions(obj); {
		case opts.PruneFalse:
			s.cs.add(Change{Key: KeyOf(obj), Action: ActionSkipped, Message: "no longer desired; kept (Prune=false)"})
		case opts.PruneLast:
			last = append(last, obj)
		default:
			now = append(now, obj)
		}
	}
	doomed := append(append([]*unstructured.Unstructured{}, now...), last...)
	if s.awaitingConfirmation(doomed) {
		return nil
	}
	if s.req.PruneCheck != nil && len(doomed) > 0 {
		if err := s.req.PruneCheck(doomed); err != nil {
			return err
		}
	}
	if err := s.pruneWaves(ctx, now, len(last) > 0); err != nil {
		return err
	}
	return s.pruneWaves(ctx, last, false)
}

// awaitingConfirmation tells whether the prune of doomed waits for its
// confirmation: one of them is marked Prune=confirm and the request is not
// confirmed. Then nothing is pruned, as in Argo CD, and the marked ones are
// listed. A dry run prunes as asked: it deletes nothing anyway.
func (s *syncRun) awaitingConfirmation(doomed []*unstructured.Unstructured) bool {
	if s.req.PruneConfirmed || s.req.DryRun {
		return false
	}
	for _, obj := range doomed {
		if s.pruneOptions(obj).PruneConfirm {
			s.cs.AwaitingPrune = append(s.cs.AwaitingPrune, KeyOf(obj))
		}
	}
	return len(s.cs.AwaitingPrune) > 0
}

// pruneWaves deletes objs wave by wave, highest first, each wave gone
// before the next; waitLast waits for the last wave too.
func (s *syncRun) pruneWaves(ctx context.Context, objs []*unstructured.Unstructured, waitLast bool) error {
	p := syncplan.BuildPrune(objs)
	for wi, w := range p.Waves {
		var wave []*unstructured.Unstructured
		for _, step := range w.Steps {
			group := make([]*unstructured.Unstructured, len(step))
			for i, idx := range step {
				group[i] = objs[idx]
			}
			s.progress(w.Number, "prune", fmt.Sprintf("%d objects", len(group)))
			changes, errs := s.c.deleteGroup(ctx, group, s.req.DryRun, "prune", s.pruneOptions)
			for _, ch := range changes {
				if ch.Action == "" {
					ch.Action = ActionPruned
				}
				ch.Wave = w.Number
				s.cs.add(ch)
			}
			s.errs = append(s.errs, errs...)
			wave = append(wave, group...)
		}
		if len(s.errs) > 0 {
			return objectErrors(s.errs)
		}
		if !s.req.DryRun && (waitLast || wi < len(p.Waves)-1) {
			if err := s.waitGone(ctx, w.Number, wave); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitGone waits until the objects of a pruned wave no longer exist.
func (s *syncRun) waitGone(ctx context.Context, wave int, objs []*unstructured.Unstructured) error {
	timeout := s.req.WaveTimeout
	if timeout <= 0 {
		timeout = s.c.opts.WaveTimeout
	}
	deadline := time.Now().Add(timeout)
	return Poll(ctx, s.c.opts.HealthPoll, func(ctx context.Context) (bool, error) {
		var left []string
		for _, obj := range objs {
			gone, err := s.c.gone(ctx, obj)
			if err != nil {
				return false, newObjectError(KeyOf(obj), "get", err)
			}
			if !gone {
				left = append(left, keyString(KeyOf(obj))+": still being deleted")
			}
		}
		if len(left) == 0 {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, &HealthError{Wave: wave, TimedOut: true, Objects: left}
		}
		s.progress(wave, "prune", fmt.Sprintf("waiting for %d objects to be deleted", len(left)))
		return false, nil
	})
}

// gone tells whether obj (that very object: same UID) no longer exists.
func (c *Cluster) gone(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	m, err := c.mapping(obj.GroupVersionKind())
	if meta.IsNoMatchError(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	live, err := c.resource(m, obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return live.GetUID() != obj.GetUID(), nil
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
// cluster no longer serves (its CRD is gone) has no objects. Lists come
// from the live cache when it has the kind.
func (c *Cluster) listTracked(ctx context.Context, appName string, kinds []schema.GroupKind) ([]*unstructured.Unstructured, []*ObjectError) {
	selector := labels.SelectorFromSet(labels.Set{LabelApp: AppLabel(appName)}).String()
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
		objs, cached := c.live().list(m, appName)
		if !cached {
			objs, err = c.listAll(ctx, m, selector)
		}
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
