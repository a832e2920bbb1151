package hooks

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// ensure returns the run's object for hook h: the one this run created
// before (a repeated run), or a new one. An object of the same name left by
// another run is deleted first when h's policy is BeforeHookCreation.
func (r *Runner) ensure(ctx context.Context, req Request, h planned) (*unstructured.Unstructured, error) {
	ri := r.resource(h.mapping, h.key.Namespace)
	mark := runMark(req.OperationID, req.Phase)
	for {
		live, err := ri.Get(ctx, h.key.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			obj := instance(h.Hook, req.App, h.key.Namespace, req.OperationID, req.Phase)
			created, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: r.fieldManager()})
			if apierrors.IsAlreadyExists(err) {
				continue // created meanwhile: look again
			}
			if err != nil {
				return nil, r.objectError(req, h, "create", err)
			}
			return created, nil
		case err != nil:
			return nil, r.objectError(req, h, "get", err)
		}
		if live.GetAnnotations()[AnnotationOperation] == mark && kube.IsTracked(req.App, live) {
			return live, nil // this run's: a repeated run waits for it
		}
		// A hook object Argo CD left for the app it was (a takeover) is an
		// earlier run's, as Argo CD's own BeforeHookCreation treats it.
		if !kube.IsTracked(req.App, live) && !kube.IsTrackedByArgoCD(req.App, live) {
			return nil, invalidf("%s hook %s: the object exists and is not a hook of app %q: rename the hook or delete the object",
				req.Phase, keyString(h.key), req.App)
		}
		if !h.Has(BeforeHookCreation) {
			return nil, invalidf("%s hook %s: the object of an earlier run (%s) still exists and the hook's delete policy has no BeforeHookCreation: delete the object, or add BeforeHookCreation to %s",
				req.Phase, keyString(h.key), live.GetAnnotations()[AnnotationOperation], app.AnnotationHookDeletePolicy)
		}
		if err := r.replace(ctx, ri, req, h, live); err != nil {
			return nil, err
		}
	}
}

// replace deletes an earlier run's object (BeforeHookCreation) and waits
// until it is gone.
func (r *Runner) replace(ctx context.Context, ri dynamic.ResourceInterface, req Request, h planned, live *unstructured.Unstructured) error {
	uid := live.GetUID()
	if live.GetDeletionTimestamp() == nil {
		background := metav1.DeletePropagationBackground
		err := ri.Delete(ctx, h.key.Name, metav1.DeleteOptions{
			PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &uid},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return r.objectError(req, h, "delete the earlier run's object", err)
		}
	}
	return kube.Poll(ctx, r.poll(), func(ctx context.Context) (bool, error) {
		cur, err := ri.Get(ctx, h.key.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && cur.GetUID() != uid) {
			return true, nil
		}
		if err != nil {
			return false, r.objectError(req, h, "get", err)
		}
		r.progress(fmt.Sprintf("%s: waiting for the earlier run's %s to go (BeforeHookCreation)", req.Phase, keyString(h.key)))
		return false, nil
	})
}

// get reads a hook's object; nil when it is gone.
func (r *Runner) get(ctx context.Context, h planned) (*unstructured.Unstructured, error) {
	obj, err := r.resource(h.mapping, h.key.Namespace).Get(ctx, h.key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hook %s: get: %w", keyString(h.key), err)
	}
	return obj, nil
}

// failureReason adds to a failed Job's message the reason of its failed
// pod, found through the Job's selector.
func (r *Runner) failureReason(ctx context.Context, obj *unstructured.Unstructured, msg string) string {
	if obj.GroupVersionKind().Group != "batch" || obj.GetKind() != "Job" {
		return msg
	}
	sel, found, _ := unstructured.NestedStringMap(obj.Object, "spec", "selector", "matchLabels")
	if !found || len(sel) == 0 {
		return msg
	}
	pods, err := r.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(obj.GetNamespace()).
		List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
	if err != nil {
		return msg
	}
	for i := range pods.Items {
		if st, reason := podState(&pods.Items[i], r.Health); st == Failed {
			return msg + "; " + reason
		}
	}
	return msg
}

// ensureNamespace creates the destination namespace when it is missing,
// as the sync's CreateNamespace does (not tracked, never deleted with the
// app).
func (r *Runner) ensureNamespace(ctx context.Context, name string) error {
	ri := r.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	if _, err := ri.Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %s: get: %w", name, err)
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	if _, err := ri.Apply(ctx, name, ns, metav1.ApplyOptions{FieldManager: r.fieldManager(), Force: true}); err != nil {
		return fmt.Errorf("namespace %s: create (CreateNamespace): %w", name, err)
	}
	return nil
}

// Delete deletes the run's hook objects named by keys (those whose delete
// policy asked for it), in the background. An object that is gone, or that
// another run created, is left alone, so Delete can be repeated.
func (r *Runner) Delete(ctx context.Context, appName, operationID string, phase app.HookType, keys []app.ResourceKey) error {
	mark := runMark(operationID, phase)
	for _, key := range keys {
		m, err := r.Mapper.RESTMapping(schema.GroupKind{Group: key.Group, Kind: key.Kind}, key.Version)
		if err != nil {
			return fmt.Errorf("hook %s: kind %s: %w", keyString(key), key.Kind, err)
		}
		ri := r.resource(m, key.Namespace)
		live, err := ri.Get(ctx, key.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("hook %s: get: %w", keyString(key), err)
		}
		if live.GetAnnotations()[AnnotationOperation] != mark || !kube.IsTracked(appName, live) {
			continue
		}
		uid := live.GetUID()
		background := metav1.DeletePropagationBackground
		err = ri.Delete(ctx, key.Name, metav1.DeleteOptions{PropagationPolicy: &background, Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("hook %s: delete (delete policy): %w", keyString(key), err)
		}
	}
	return nil
}

func (r *Runner) resource(m *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	ri := r.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return ri.Namespace(ns)
	}
	return ri
}

// objectError wraps a request's failure with the hook it was for; an
// answer that says the object itself is wrong becomes an InvalidError.
func (r *Runner) objectError(req Request, h planned, op string, err error) error {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsForbidden(err) {
		return invalidf("%s hook %s: %s: %s", req.Phase, keyString(h.key), op, err.Error())
	}
	return fmt.Errorf("%s hook %s: %s: %w", req.Phase, keyString(h.key), op, err)
}
