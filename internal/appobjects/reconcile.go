package appobjects

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
)

// deletingAgain: how soon a deletion under way is looked at again;
// refusedAgain: an object its app refused (its project is not there yet,
// the app is still being deleted).
const (
	deletingAgain = 3 * time.Second
	refusedAgain  = 30 * time.Second
)

// reconcile brings the app of object key in line with the object; again
// asks to be called once more after that long.
func (c *Controller) reconcile(ctx context.Context, key string) (again time.Duration, err error) {
	ns, objName, err := splitKey(key)
	if err != nil {
		return 0, nil
	}
	name := c.appName(ns, objName)
	item, exists, err := c.indexer.GetByKey(key)
	if err != nil {
		return 0, err
	}
	if !exists {
		c.forget(key)
		// Deleted without the resources finalizer: the app goes, its
		// resources stay, as Argo CD's do.
		_, err := c.Apps.Delete(ctx, name, key, false, "")
		if IsRefused(err) {
			return 0, nil
		}
		return 0, err
	}
	u := item.(*unstructured.Unstructured)
	if u.GetDeletionTimestamp() != nil {
		return c.finalize(ctx, key, name, u)
	}
	a, err := Read(u, c.Objects.Validate)
	if err != nil {
		c.forget(key)
		return 0, c.Objects.WriteStatus(ctx, key, nil, nil)
	}
	if ns != c.Namespace {
		a.Qualify(ns) // team-a/web
	}
	if again, err := c.apply(ctx, key, a, u); err != nil || again > 0 {
		return again, err
	}
	if err := c.operation(ctx, key, name, u); err != nil {
		return 0, err
	}
	return 0, c.refresh(ctx, key, name, u)
}

// apply sends the app the object's spec when it changed since the last.
// A refused spec is said on the object and tried again after refusedAgain:
// what refused it may change without the object (a project applied).
func (c *Controller) apply(ctx context.Context, key string, a *app.Application, u *unstructured.Unstructured) (time.Duration, error) {
	digest := specDigest(u)
	c.mu.Lock()
	sent := c.applied[key] == digest
	c.mu.Unlock()
	if sent {
		return 0, nil
	}
	err := c.Apps.Apply(ctx, a, key)
	if IsRefused(err) {
		// Another owner's app of this name, or a spec the app refuses:
		// the object says why, and the app is left as it is.
		return refusedAgain, c.Objects.WriteStatus(ctx, key, nil, err)
	}
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	c.applied[key] = digest
	c.mu.Unlock()
	if slices.ContainsFunc(conditionsOf(u), func(t string) bool { return t == ConditionInvalidSpec }) {
		return 0, c.Objects.WriteStatus(ctx, key, nil, nil) // fixed: the condition goes
	}
	return 0, nil
}

// operation hands the object's operation to the app and clears it, as
// Argo CD's controller clears it once taken. An operation Ferry cannot
// take is cleared too, and said in the log. The cache may show the
// operation again after it was handed (a status write seen before the
// clearing patch): the same operation is then cleared, not handed twice,
// until the cache has shown the object without it.
func (c *Controller) operation(ctx context.Context, key, name string, u *unstructured.Unstructured) error {
	raw, ok := u.Object["operation"]
	if !ok {
		c.mu.Lock()
		delete(c.handed, key)
		c.mu.Unlock()
		return nil
	}
	handed, _ := json.Marshal(raw) // an object's field: always encodes
	c.mu.Lock()
	again := c.handed[key] == string(handed)
	c.mu.Unlock()
	if again {
		return c.patch(ctx, u, map[string]any{"operation": nil})
	}
	op, err := ReadOperation(raw)
	if err == nil {
		err = c.Apps.Sync(ctx, name, key, op)
	}
	if err != nil && !IsRefused(err) && op != nil {
		return err
	}
	if err != nil {
		slog.Warn("applications: the operation was refused, or failed at once", "object", key, "error", err)
	}
	c.mu.Lock()
	c.handed[key] = string(handed)
	c.mu.Unlock()
	return c.patch(ctx, u, map[string]any{"operation": nil})
}

// refresh asks the app for the refresh the annotation names, then removes it.
func (c *Controller) refresh(ctx context.Context, key, name string, u *unstructured.Unstructured) error {
	kind, ok := u.GetAnnotations()[RefreshAnnotation]
	if !ok {
		return nil
	}
	if err := c.Apps.Refresh(ctx, name, kind == "hard"); err != nil && !IsRefused(err) {
		return err
	}
	return c.patch(ctx, u, map[string]any{"metadata": map[string]any{"annotations": map[string]any{RefreshAnnotation: nil}}})
}

// finalize deletes the app of an object being deleted that carries the
// resources finalizer, cascading as it says, and removes the finalizer
// once the app is gone. Without it the object goes at once, and its app
// with it (reconcile).
func (c *Controller) finalize(ctx context.Context, key, name string, u *unstructured.Unstructured) (time.Duration, error) {
	probe := app.Application{Metadata: app.ObjectMeta{Finalizers: u.GetFinalizers()}}
	propagation := probe.DeletePropagation()
	if propagation == "" {
		return 0, nil
	}
	done, err := c.Apps.Delete(ctx, name, key, true, propagation)
	switch {
	case err != nil && !IsRefused(err):
		return 0, err
	case err == nil && !done:
		return deletingAgain, nil
	}
	c.forget(key)
	kept := slices.DeleteFunc(slices.Clone(u.GetFinalizers()), func(f string) bool {
		return f == app.ResourcesFinalizer || f == app.ForegroundFinalizer || f == app.BackgroundFinalizer
	})
	// A merge patch replaces the list; the resourceVersion makes it refuse
	// a list that changed since.
	return 0, c.patch(ctx, u, map[string]any{"metadata": map[string]any{"finalizers": kept, "resourceVersion": u.GetResourceVersion()}})
}

// patch merge-patches u.
func (c *Controller) patch(ctx context.Context, u *unstructured.Unstructured, p map[string]any) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = c.Objects.Client.Resource(Applications).Namespace(u.GetNamespace()).
		Patch(ctx, u.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return fmt.Errorf("application %s: %w", Key(u.GetNamespace(), u.GetName()), err)
	}
	return nil
}

func (c *Controller) forget(key string) {
	c.mu.Lock()
	delete(c.applied, key)
	c.mu.Unlock()
}

// conditionsOf lists the types of u's status conditions.
func conditionsOf(u *unstructured.Unstructured) []string {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			t, _ := m["type"].(string)
			out = append(out, t)
		}
	}
	return out
}
