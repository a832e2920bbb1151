package regionlive

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
)

// PatchType is the patch type of a --patch-type, as argocd app
// patch-resource names them (the MIME types) or short (json, merge,
// strategic).
func PatchType(name string) (types.PatchType, error) {
	switch strings.ToLower(name) {
	case "json", string(types.JSONPatchType):
		return types.JSONPatchType, nil
	case "merge", string(types.MergePatchType):
		return types.MergePatchType, nil
	case "strategic", string(types.StrategicMergePatchType):
		return types.StrategicMergePatchType, nil
	}
	return "", fmt.Errorf("patch type %q: want %s (json), %s (merge) or %s (strategic)", name, types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType)
}

// Patch patches the live object k, as argocd app patch-resource does; the
// app shows the change as drift (and self-heal undoes it).
func (r *Region) Patch(ctx context.Context, k app.ResourceKey, patch []byte, pt types.PatchType) error {
	ri, err := r.resource(schema.GroupKind{Group: k.Group, Kind: k.Kind}, k.Version, k.Namespace)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, k.Name, pt, patch, metav1.PatchOptions{FieldManager: "ferry-cli"})
	return err
}

// Delete deletes the live object k, as argocd app delete-resource does:
// orphan leaves what it owns; force deletes it without a grace period.
func (r *Region) Delete(ctx context.Context, k app.ResourceKey, force, orphan bool) error {
	ri, err := r.resource(schema.GroupKind{Group: k.Group, Kind: k.Kind}, k.Version, k.Namespace)
	if err != nil {
		return err
	}
	policy := metav1.DeletePropagationForeground
	if orphan {
		policy = metav1.DeletePropagationOrphan
	}
	opts := metav1.DeleteOptions{PropagationPolicy: &policy}
	if force {
		zero := int64(0)
		opts.GracePeriodSeconds = &zero
		if !orphan {
			background := metav1.DeletePropagationBackground
			opts.PropagationPolicy = &background
		}
	}
	return ri.Delete(ctx, k.Name, opts)
}
