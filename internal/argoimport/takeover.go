package argoimport

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// goneWithin bounds the wait for Argo CD's Application to be deleted.
const goneWithin = time.Minute

// Takeover hands the app name of the control namespace over from Argo CD
// to Ferry: Argo CD's Application (argo, the cluster it was imported
// from) loses its finalizers and is deleted, so that Argo CD deletes
// nothing it applied; then the Ferry app gets back the automated sync
// policy and the finalizers it had in Argo CD, and leaves shadow. Ferry's
// next sync takes over the fields Argo CD's field managers own. It can be
// run again after a failure halfway.
func Takeover(ctx context.Context, argo, control dynamic.Interface, controlNamespace, name string) error {
	apps := control.Resource(Applications).Namespace(controlNamespace)
	s, err := inShadow(ctx, apps, "app", name)
	if err != nil {
		return err
	}
	if err := deleteWithoutCascade(ctx, argo, s.From); err != nil {
		return fmt.Errorf("takeover: app %s: %w", name, err)
	}
	body, err := json.Marshal(s.restored())
	if err != nil {
		return err
	}
	if _, err := apps.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("takeover: app %s: leave shadow: %w", name, err)
	}
	return nil
}

// restored is the merge patch of an Application (or of an ApplicationSet's
// template) that gives back what s kept aside and drops the shadow mark.
func (s Shadow) restored() map[string]any {
	patch := map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{AnnotationShadow: nil},
		"finalizers":  s.Finalizers,
	}}
	if s.Automated != nil {
		patch["spec"] = map[string]any{"syncPolicy": map[string]any{"automated": s.Automated}}
	}
	return patch
}

// inShadow is what the shadow annotation of ri's object name (of kind,
// for errors) keeps aside.
func inShadow(ctx context.Context, ri dynamic.ResourceInterface, kind, name string) (Shadow, error) {
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return Shadow{}, fmt.Errorf("takeover: %s %s: %w", kind, name, err)
	}
	s, ok, err := shadowOf(obj)
	switch {
	case err != nil:
		return s, fmt.Errorf("takeover: %s %s: %w", kind, name, err)
	case !ok:
		return s, fmt.Errorf("takeover: %s %s is not in shadow (annotation %s): it was not imported with ferry import, or it was taken over already",
			kind, name, AnnotationShadow)
	}
	return s, nil
}

// deleteWithoutCascade deletes Argo CD's Application from (namespace/name)
// after removing its finalizers (resources-finalizer.argocd.argoproj.io
// would have Argo CD delete what it applied), and waits until it is gone.
// One already gone is fine.
func deleteWithoutCascade(ctx context.Context, argo dynamic.Interface, from string) error {
	ns, name, ok := strings.Cut(from, "/")
	if !ok {
		return fmt.Errorf("annotation %s: from %q is not namespace/name", AnnotationShadow, from)
	}
	apps := argo.Resource(Applications).Namespace(ns)
	_, err := apps.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove the finalizers of Argo CD's Application %s: %w", from, err)
	}
	if err := apps.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Argo CD's Application %s: %w", from, err)
	}
	deadline := time.Now().Add(goneWithin)
	for {
		_, err := apps.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Argo CD's Application %s is still there after %s (err %v)", from, goneWithin, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
