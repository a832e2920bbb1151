package activities

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// selected narrows a selective sync (argocd app sync --resource, --label)
// to what it names: the objects to apply, and the keys of the inventory
// a prune may delete. Nil sel: everything. An object without a namespace
// is matched in the app's namespace, where it is applied. A selection that
// names nothing in the manifests fails for good, as argocd refuses it.
func selected(objs []*unstructured.Unstructured, inventory []app.ResourceKey, namespace string, sel *app.Selection) (
	[]*unstructured.Unstructured, []app.ResourceKey, error) {
	if sel == nil || sel.Empty() {
		return objs, inventory, nil
	}
	inNamespace := func(k app.ResourceKey) app.ResourceKey {
		if k.Namespace == "" {
			k.Namespace = namespace
		}
		return k
	}
	var outObjs []*unstructured.Unstructured
	for _, o := range objs {
		if sel.Selects(inNamespace(kube.KeyOf(o)), o.GetLabels()) {
			outObjs = append(outObjs, o)
		}
	}
	var outInventory []app.ResourceKey
	for _, k := range inventory {
		// A pruned object's labels are not in Git any more: only a
		// selection by resource reaches it.
		if len(sel.Labels) == 0 && sel.Selects(inNamespace(k), nil) {
			outInventory = append(outInventory, k)
		}
	}
	if len(outObjs) == 0 && len(outInventory) == 0 {
		var names []string
		for _, r := range sel.Resources {
			names = append(names, r.String())
		}
		names = append(names, sel.Labels...)
		return nil, nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("selective sync: no resource of the app matches %s: see ferry app get for the app's resources", strings.Join(names, ", ")),
			contract.ErrInvalidManifests, nil)
	}
	return outObjs, outInventory, nil
}
