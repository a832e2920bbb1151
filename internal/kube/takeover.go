package kube

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/csaupgrade"
)

// Taking over what Argo CD (or kubectl's client-side apply) applied. A
// server-side apply takes the fields it sets, but a field that only the
// former applier set stays that applier's: deleted from Git after the
// switch, it would stay in the cluster. So once Ferry's apply of such an
// object shows the former appliers' entries in managedFields, they become
// Ferry's own apply entry (client-go's csaupgrade: the migration
// Kubernetes documents, which Argo CD itself makes when it switches an
// object to server-side apply). The fields they set and Ferry does not,
// Argo CD's tracking annotation and label and kubectl's last-applied
// annotation among them, are then Ferry's, so Ferry's apply, sent again at
// once, removes them. It happens once per object: then they own nothing.
// Other writers' fields (a human's kubectl edit, a controller's status)
// stay theirs.

// formerAppliers are the field managers whose fields Ferry takes over:
// Argo CD's application controller, with a client-side apply (operation
// Update) or a server-side one (Apply), and kubectl's client-side apply,
// as Argo CD's own migration takes it by default.
var formerAppliers = sets.New("argocd-controller", "kubectl-client-side-apply")

// takeOverAttempts bounds the tries of takeOver: a controller that writes
// the object's status (a new Deployment's) changes it between a read and
// the patch a few times.
const takeOverAttempts = 10

// takeOver moves the former appliers' fields of existing to Ferry's field
// manager, with a JSON patch that fails if the object changed since it
// was read; then it reads the object again and tries anew. It returns the
// object as patched, or as it is when there was nothing to take.
func (c *Cluster) takeOver(ctx context.Context, ri dynamic.ResourceInterface, existing *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	for attempt := 1; ; attempt++ {
		patch, err := takeOverPatch(existing, c.opts.FieldManager)
		if err != nil || patch == nil {
			return existing, err
		}
		out, err := ri.Patch(ctx, existing.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: c.opts.FieldManager})
		if !apierrors.IsConflict(err) || attempt == takeOverAttempts {
			return out, err
		}
		if existing, err = ri.Get(ctx, existing.GetName(), metav1.GetOptions{}); err != nil {
			return nil, err
		}
	}
}

// takeOverPatch is the JSON patch that makes manager the owner of the
// former appliers' fields of obj, or nil when they own none.
func takeOverPatch(obj *unstructured.Unstructured, manager string) ([]byte, error) {
	if !hasFormerAppliers(obj) {
		return nil, nil
	}
	before := obj.GetManagedFields()
	// csaupgrade merges Update entries: a server-side applier's entry is
	// merged the same way once it is seen as one.
	work := obj.DeepCopy()
	entries := work.GetManagedFields()
	for i := range entries {
		if isFormerApplier(entries[i]) {
			entries[i].Operation = metav1.ManagedFieldsOperationUpdate
		}
	}
	work.SetManagedFields(entries)
	if err := csaupgrade.UpgradeManagedFields(work, formerAppliers, manager); err != nil {
		return nil, err
	}
	after := work.GetManagedFields()
	if reflect.DeepEqual(before, after) {
		return nil, nil
	}
	return json.Marshal([]map[string]any{
		{"op": "replace", "path": "/metadata/managedFields", "value": after},
		// A conflict, not a lost update, if the object changed meanwhile.
		{"op": "replace", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
	})
}

// hasFormerAppliers tells whether a former applier owns fields of obj.
func hasFormerAppliers(obj *unstructured.Unstructured) bool {
	return slices.ContainsFunc(obj.GetManagedFields(), isFormerApplier)
}

func isFormerApplier(e metav1.ManagedFieldsEntry) bool {
	return formerAppliers.Has(e.Manager) && e.Subresource == ""
}
