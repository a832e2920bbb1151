package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// keptObjects drops the objects of kinds the region excludes, as Argo CD
// leaves out of an app's targets the kinds resource.exclusions names (its
// ExcludedResourceWarning): each is logged by kind and name only.
func (r *Region) keptObjects(ctx context.Context, appName string, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	if r.Excluded == nil {
		return objs
	}
	kept := objs[:0]
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if r.Excluded(gvk.Group, gvk.Kind) {
			activity.GetLogger(ctx).Info("resource excluded by resource.exclusions/inclusions: not applied, compared or pruned",
				"app", appName, "group", gvk.Group, "kind", gvk.Kind, "namespace", o.GetNamespace(), "name", o.GetName())
			continue
		}
		kept = append(kept, o)
	}
	return kept
}

// keptKeys drops the keys of excluded kinds from what the region reported
// before, so that their kinds are not listed for a compare or a prune.
func (r *Region) keptKeys(keys []app.ResourceKey) []app.ResourceKey {
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
