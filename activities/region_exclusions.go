package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// keptObjects drops the objects of kinds the region excludes, as Argo CD
// leaves out of an app's targets the kinds resource.exclusions names.
func (r *Region) keptObjects(ctx context.Context, appName string, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	kept, _ := r.splitExcluded(ctx, appName, objs)
	return kept
}

// splitExcluded is keptObjects with the keys of the objects it dropped,
// which the compare reports for the app's ExcludedResourceWarning; each
// is logged by kind and name only.
func (r *Region) splitExcluded(ctx context.Context, appName string, objs []*unstructured.Unstructured) (kept []*unstructured.Unstructured, excluded []app.ResourceKey) {
	if r.Excluded == nil {
		return objs, nil
	}
	kept = objs[:0]
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if r.Excluded(gvk.Group, gvk.Kind) {
			activity.GetLogger(ctx).Info("resource excluded by resource.exclusions/inclusions: not applied, compared or pruned",
				"app", appName, "group", gvk.Group, "kind", gvk.Kind, "namespace", o.GetNamespace(), "name", o.GetName())
			excluded = append(excluded, app.ResourceKey{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
				Namespace: o.GetNamespace(), Name: o.GetName()})
			continue
		}
		kept = append(kept, o)
	}
	return kept, excluded
}

// inventoryIncluded drops the keys of excluded kinds from the app's
// inventory, so that their kinds are not listed for a compare or a prune.
func (r *Region) inventoryIncluded(keys []app.ResourceKey) []app.ResourceKey {
	if r.Excluded == nil {
		return keys
	}
	var kept []app.ResourceKey
	for _, k := range keys {
		if !r.Excluded(k.Group, k.Kind) {
			kept = append(kept, k)
		}
	}
	return kept
}
