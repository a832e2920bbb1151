package kube

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// applyNamespace is ensureNamespace for an app with managedNamespaceMetadata:
// the destination namespace is applied at every sync, created when missing,
// with the labels and annotations the spec names. Server-side apply keeps
// them up to date as Argo CD does: a label the spec no longer names goes,
// and those that others set stay. A namespace that already exists but was
// not Ferry's gets them too, as in Argo CD.
func (c *Cluster) applyNamespace(ctx context.Context, name string, dryRun bool, meta *app.ManagedNamespaceMetadata) (*Change, *ObjectError) {
	key := app.ResourceKey{Version: "v1", Kind: "Namespace", Name: name}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	if len(meta.Labels) > 0 {
		ns.SetLabels(meta.Labels)
	}
	if len(meta.Annotations) > 0 {
		ns.SetAnnotations(meta.Annotations)
	}
	m, err := c.mapping(ns.GroupVersionKind())
	if err != nil {
		return nil, newObjectError(key, "apply namespace", err)
	}
	live, err := c.resource(m, "").Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, newObjectError(key, "get", err)
	}
	existed := err == nil
	ri, err := c.writeResource(ctx, m, "")
	if err != nil {
		return nil, newObjectError(key, "apply namespace", err)
	}
	opts := metav1.ApplyOptions{FieldManager: c.opts.FieldManager, Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	after, err := ri.Apply(ctx, name, ns, opts)
	if err != nil {
		return nil, newObjectError(key, "apply namespace", err)
	}
	ch := &Change{Key: key, Action: ActionCreated, Message: "destination namespace (CreateNamespace, managedNamespaceMetadata); not pruned with the app"}
	if existed {
		if after.GetResourceVersion() == live.GetResourceVersion() {
			return nil, nil
		}
		ch.Action, ch.Message = ActionConfigured, "destination namespace's labels and annotations (managedNamespaceMetadata)"
	}
	if dryRun {
		ch.Message = joinMessage("dry run", ch.Message)
	}
	return ch, nil
}
