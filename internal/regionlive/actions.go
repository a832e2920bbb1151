package regionlive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	jsonpatch "github.com/evanphx/json-patch"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/customize"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// Resource actions, as Argo CD runs them: the built-in restart, and the Lua
// actions of an argocd-cm (customize.Set).

// actionFieldManager owns the fields an action writes.
const actionFieldManager = "ferry-action"

// restartedAtAnnotation is what kubectl rollout restart (and Argo CD's
// restart action) sets on the pod template.
const restartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// restartKinds are the kinds the built-in restart action knows.
var restartKinds = map[string]bool{"apps/Deployment": true, "apps/StatefulSet": true, "apps/DaemonSet": true}

// BuiltinActions are the actions of k that need no Lua script: restart for
// a Deployment, StatefulSet or DaemonSet. It reads no cluster.
func BuiltinActions(k app.ResourceKey) []customize.Action {
	return withBuiltin(k, nil)
}

// withBuiltin puts the built-in restart first, unless a Lua action takes
// its name.
func withBuiltin(k app.ResourceKey, lua []customize.Action) []customize.Action {
	if restartKinds[k.Group+"/"+k.Kind] && !slices.ContainsFunc(lua, func(a customize.Action) bool { return a.Name == "restart" }) {
		return append([]customize.Action{{Name: "restart"}}, lua...)
	}
	return lua
}

// Actions lists the actions of the live object k: the Lua actions set
// gives it (set may be nil: none, and the cluster is not read), and the
// built-in restart of a Deployment, StatefulSet or DaemonSet when no Lua
// action is called restart. When the object cannot be read, the built-in
// actions come with the error.
func (r *Region) Actions(ctx context.Context, set *customize.Set, k app.ResourceKey) ([]customize.Action, error) {
	if set == nil {
		return BuiltinActions(k), nil
	}
	live, err := r.Get(ctx, k)
	var lua []customize.Action
	if err == nil && live != nil {
		lua, err = set.Actions(live)
	}
	return withBuiltin(k, lua), err
}

// RunAction runs the action on the live object k and says what it changed.
// restart is the built-in one, unless set has a Lua action of that name.
func (r *Region) RunAction(ctx context.Context, set *customize.Set, k app.ResourceKey, action string, params map[string]string) ([]string, error) {
	live, err := r.Get(ctx, k)
	if err != nil {
		return nil, err
	}
	if live == nil {
		return nil, errors.New("not found in the cluster: the app has not deployed it yet (ferry app sync)")
	}
	if action == "restart" && !hasLuaAction(set, live, action) {
		if !restartKinds[k.Group+"/"+k.Kind] {
			return nil, fmt.Errorf("the built-in restart takes a Deployment, StatefulSet or DaemonSet; define a restart for %s under resource.customizations.actions.%s",
				kindOf(k), actionKey(k))
		}
		return r.restart(ctx, live)
	}
	if set == nil {
		return nil, fmt.Errorf("no such action: the built-in one is restart; give Lua actions with --resource-customizations (an argocd-cm with resource.customizations.actions.%s)", actionKey(k))
	}
	impacted, err := set.RunAction(live, action, params)
	if err != nil {
		return nil, err
	}
	var done []string
	for _, im := range impacted {
		what, err := r.applyImpacted(ctx, live, im)
		if err != nil {
			return done, err
		}
		done = append(done, what)
	}
	return done, nil
}

func hasLuaAction(set *customize.Set, obj *unstructured.Unstructured, name string) bool {
	if set == nil {
		return false
	}
	acts, err := set.Actions(obj)
	return err == nil && slices.ContainsFunc(acts, func(a customize.Action) bool { return a.Name == name })
}

// actionKey is k's key under resource.customizations.actions.
func actionKey(k app.ResourceKey) string {
	if k.Group == "" {
		return k.Kind
	}
	return k.Group + "_" + k.Kind
}

func kindOf(k app.ResourceKey) string {
	if k.Group == "" {
		return k.Kind
	}
	return k.Group + "/" + k.Kind
}

// restart sets the pod template's restartedAt annotation.
func (r *Region) restart(ctx context.Context, live *unstructured.Unstructured) ([]string, error) {
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{restartedAtAnnotation: time.Now().UTC().Format(time.RFC3339)}}}}})
	if err != nil {
		return nil, err
	}
	ri, err := r.resourceOf(live)
	if err != nil {
		return nil, err
	}
	if _, err := ri.Patch(ctx, live.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: actionFieldManager}); err != nil {
		return nil, err
	}
	return []string{"restarted (pod template annotation " + restartedAtAnnotation + ")"}, nil
}

// applyImpacted writes one object a Lua action returned: a merge patch of
// what the script changed (status through the status subresource too,
// where there is one), or a create.
func (r *Region) applyImpacted(ctx context.Context, live *unstructured.Unstructured, im customize.Impacted) (string, error) {
	obj := im.Object
	if obj.GetNamespace() == "" {
		obj.SetNamespace(live.GetNamespace())
	}
	ri, err := r.resourceOf(obj)
	if err != nil {
		return "", err
	}
	what := describe(kube.KeyOf(obj))
	if im.Operation == "create" {
		if _, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: actionFieldManager}); err != nil {
			return "", fmt.Errorf("create %s: %w", what, err)
		}
		return "created " + what, nil
	}
	before, err := json.Marshal(live.Object)
	if err != nil {
		return "", err
	}
	after, err := json.Marshal(obj.Object)
	if err != nil {
		return "", err
	}
	patch, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return "", fmt.Errorf("patch of %s: %w", what, err)
	}
	if string(patch) == "{}" {
		return "unchanged " + what, nil
	}
	opts := metav1.PatchOptions{FieldManager: actionFieldManager}
	if _, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, patch, opts); err != nil {
		return "", fmt.Errorf("patch %s: %w", what, err)
	}
	var fields map[string]any
	if json.Unmarshal(patch, &fields) == nil && fields["status"] != nil {
		_, err := ri.Patch(ctx, obj.GetName(), types.MergePatchType, patch, opts, "status")
		if err != nil && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("patch the status of %s: %w", what, err)
		}
	}
	return "patched " + what, nil
}

func (r *Region) resourceOf(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	return r.resource(gvk.GroupKind(), gvk.Version, obj.GetNamespace())
}
