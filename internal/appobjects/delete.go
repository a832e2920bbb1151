package appobjects

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Delete deletes the Application object name of objects as argocd app
// delete does: first its finalizers are set as cascade and the
// propagation policy ask (DeleteFinalizers), then the object is deleted;
// its app's deletion goes on from there. found is false when there is no
// such object.
func Delete(ctx context.Context, objects dynamic.ResourceInterface, name string, cascade bool, policy string) (found bool, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := objects.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		found = true
		finalizers, err := DeleteFinalizers(u.GetFinalizers(), cascade, policy)
		if err != nil {
			return err
		}
		u.SetFinalizers(finalizers)
		if _, err := objects.Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
			return fmt.Errorf("set the finalizers of Application object %s: %w", Key(u.GetNamespace(), name), err)
		}
		return nil
	})
	if apierrors.IsNotFound(err) {
		return found, nil
	}
	if err != nil {
		return found, err
	}
	if err := objects.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return true, err
	}
	return true, nil
}

// DeleteFinalizers are an object's finalizers for a deletion that
// cascades or not, with propagation policy ("": the finalizer's, else
// foreground), as argocd app delete sets them.
func DeleteFinalizers(fs []string, cascade bool, policy string) ([]string, error) {
	var kept []string
	current := ""
	for _, f := range fs {
		switch f {
		case app.ResourcesFinalizer, app.ForegroundFinalizer:
			current = app.PropagationForeground
		case app.BackgroundFinalizer:
			current = app.PropagationBackground
		default:
			kept = append(kept, f)
		}
	}
	switch {
	case !cascade:
		return kept, nil
	case policy == "orphan":
		return nil, fmt.Errorf("propagation policy orphan: an Application object's finalizer says foreground or background only: give one of them, or do not cascade")
	case policy == app.PropagationBackground, policy == "" && current == app.PropagationBackground:
		return append(kept, app.BackgroundFinalizer), nil
	}
	return append(kept, app.ResourcesFinalizer), nil
}
