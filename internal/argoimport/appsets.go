package argoimport

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/internal/appset"
)

// An ApplicationSet arrives in shadow too: Ferry's ApplicationSet
// generates the same apps (the same names), each carrying the shadow
// annotation its template gives it, so that they compare and never
// write; the template's automated sync policy and finalizers are kept in
// the set's own annotation. Argo CD's Applications the set owns are not
// imported one by one: Ferry's set makes them. The takeover of the set
// (TakeoverSet) deletes Argo CD's set without a cascade, then its apps
// without one, then gives the template back what it kept.

// shadowSet is Argo CD's ApplicationSet u as a Ferry ApplicationSet whose
// apps run in shadow, and what of it Ferry cannot carry: what could still
// sync the apps (a template patch, a generator's template override of the
// sync policy, a rolling sync), and what its validation refuses.
func shadowSet(u unstructured.Unstructured, namespace string) (*unstructured.Unstructured, []Problem) {
	ref := object("ApplicationSet", u)
	var problems []Problem
	obj := copied(u, namespace)
	if patch, _, _ := unstructured.NestedString(obj.Object, "spec", "templatePatch"); patch != "" {
		problems = append(problems, ref.problem("spec.templatePatch",
			"a template patch may set each app's sync policy, which import cannot hold aside: its apps would sync in shadow; remove the patch before the import and put it back after the takeover"))
	}
	if kind, _, _ := unstructured.NestedString(obj.Object, "spec", "strategy", "type"); kind == "RollingSync" {
		problems = append(problems, ref.problem("spec.strategy",
			"a RollingSync strategy syncs the set's apps, which run in shadow until the takeover: remove it before the import and put it back after"))
	}
	generators, _, _ := unstructured.NestedSlice(obj.Object, "spec", "generators")
	for i, g := range generators {
		for kind, body := range asMap(g) {
			if _, found, _ := unstructured.NestedFieldNoCopy(asMap(body), "template", "spec", "syncPolicy"); found {
				problems = append(problems, ref.problem(fmt.Sprintf("spec.generators[%d].%s.template.spec.syncPolicy", i, kind),
					"a generator's template sets its apps' sync policy, which import cannot hold aside: move it to spec.template before the import"))
			}
		}
	}

	shadow := Shadow{From: u.GetNamespace() + "/" + u.GetName()}
	if automated, found, _ := unstructured.NestedFieldCopy(obj.Object, "spec", "template", "spec", "syncPolicy", "automated"); found {
		shadow.Automated = automated
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "spec", "syncPolicy", "automated")
	}
	if finalizers, found, _ := unstructured.NestedStringSlice(obj.Object, "spec", "template", "metadata", "finalizers"); found {
		shadow.Finalizers = finalizers
		unstructured.RemoveNestedField(obj.Object, "spec", "template", "metadata", "finalizers")
	}
	generated, _ := json.Marshal(Shadow{AppSet: shadow.From}) // plain values: always encode
	if err := unstructured.SetNestedField(obj.Object, string(generated), "spec", "template", "metadata", "annotations", AnnotationShadow); err != nil {
		problems = append(problems, ref.problem("spec.template.metadata.annotations", err.Error()))
	}
	mark, _ := json.Marshal(shadow)
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationShadow] = string(mark)
	obj.SetAnnotations(annotations)
	if doc, err := json.Marshal(obj.Object); err != nil {
		problems = append(problems, ref.problem("", err.Error()))
	} else if _, err := appset.Read(doc); err != nil {
		problems = append(problems, fieldProblems(ref, err)...)
	}
	return obj, problems
}

// setOwner names the ApplicationSet that owns the Application u, if one
// does.
func setOwner(u unstructured.Unstructured) (string, bool) {
	for _, o := range u.GetOwnerReferences() {
		if o.Kind == "ApplicationSet" {
			return o.Name, true
		}
	}
	return "", false
}

// setApps are Argo CD's Applications in namespace that the ApplicationSet
// name owns.
func setApps(ctx context.Context, argo dynamic.Interface, namespace, name string) ([]unstructured.Unstructured, error) {
	list, err := argo.Resource(Applications).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Argo CD's Applications in %s: %w", namespace, err)
	}
	var out []unstructured.Unstructured
	for _, u := range sorted(list.Items) {
		if owner, ok := setOwner(u); ok && owner == name {
			out = append(out, u)
		}
	}
	return out, nil
}

// TakeoverSet hands the ApplicationSet name of the control namespace over
// from Argo CD to Ferry: Argo CD's ApplicationSet is deleted leaving its
// Applications (orphan), then each of them loses its finalizers and is
// deleted, so that Argo CD deletes nothing it applied; then the Ferry set
// gets back its template's automated sync policy and finalizers, and its
// apps leave shadow. It can be run again after a failure halfway.
func TakeoverSet(ctx context.Context, argo, control dynamic.Interface, controlNamespace, name string) error {
	sets := control.Resource(ApplicationSets).Namespace(controlNamespace)
	s, err := inShadow(ctx, sets, "applicationset", name)
	if err != nil {
		return err
	}
	ns, argoName, ok := strings.Cut(s.From, "/")
	if !ok {
		return fmt.Errorf("takeover: applicationset %s: annotation %s: from %q is not namespace/name", name, AnnotationShadow, s.From)
	}
	apps, err := setApps(ctx, argo, ns, argoName)
	if err != nil {
		return fmt.Errorf("takeover: applicationset %s: %w", name, err)
	}
	if err := deleteSetOrphaning(ctx, argo, ns, argoName); err != nil {
		return fmt.Errorf("takeover: applicationset %s: %w", name, err)
	}
	for _, a := range apps {
		if err := deleteWithoutCascade(ctx, argo, a.GetNamespace()+"/"+a.GetName()); err != nil {
			return fmt.Errorf("takeover: applicationset %s: %w", name, err)
		}
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{AnnotationShadow: nil}},
		"spec":     map[string]any{"template": s.restored()},
	})
	if err != nil {
		return err
	}
	if _, err := sets.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("takeover: applicationset %s: leave shadow: %w", name, err)
	}
	return nil
}

// deleteSetOrphaning deletes Argo CD's ApplicationSet namespace/name
// leaving its Applications (the garbage collector orphans them), and
// waits until it is gone, so that it makes none of them again. One
// already gone is fine.
func deleteSetOrphaning(ctx context.Context, argo dynamic.Interface, namespace, name string) error {
	sets := argo.Resource(ApplicationSets).Namespace(namespace)
	orphan := metav1.DeletePropagationOrphan
	err := sets.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &orphan})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete Argo CD's ApplicationSet %s/%s: %w", namespace, name, err)
	}
	deadline := time.Now().Add(goneWithin)
	for {
		_, err := sets.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Argo CD's ApplicationSet %s/%s is still there after %s (err %v)", namespace, name, goneWithin, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
