package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// controlFlags name the control cluster whose Application objects are the
// apps, as the workers' --control-namespace and --control-context do.
// Without a namespace, apps live in Temporal alone.
type controlFlags struct {
	namespace, context string
}

func (f *controlFlags) register(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.namespace, "control-namespace", os.Getenv("FERRY_CONTROL_NAMESPACE"),
		"namespace of the control cluster whose Application objects are the apps: apply and delete write the objects (env FERRY_CONTROL_NAMESPACE; empty: apps live in Temporal alone)")
	pf.StringVar(&f.context, "control-context", os.Getenv("FERRY_CONTROL_CONTEXT"),
		"kubeconfig context of the control cluster (env FERRY_CONTROL_CONTEXT; default: the current context)")
}

// objects is the control cluster's Application objects; nil without
// --control-namespace.
func (f *controlFlags) objects() (*controlObjects, error) {
	if f.namespace == "" {
		return nil, nil
	}
	rc, err := kube.LoadConfig(os.Getenv("KUBECONFIG"), f.context)
	if err != nil {
		return nil, fmt.Errorf("the control cluster (--control-context %q): %w", f.context, err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &controlObjects{apps: dyn.Resource(appobjects.Applications).Namespace(f.namespace), namespace: f.namespace}, nil
}

type controlObjects struct {
	apps      dynamic.ResourceInterface
	namespace string
}

// takenWithin: how long apply waits for a control worker to take an object up.
const takenWithin = 2 * time.Minute

// applier writes each app's file as its Application object (server-side
// apply, field manager ferry) and returns once the app runs the object's
// spec, or with the object's InvalidSpecError.
func (o *controlObjects) applier(c client.Client, inputs []applyInput) applyFunc {
	raw := map[string][]byte{}
	for _, in := range inputs {
		raw[in.app.Metadata.Name] = in.raw
	}
	return func(ctx context.Context, a *app.Application) error {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw[a.Metadata.Name], &u.Object); err != nil {
			return err
		}
		u.SetNamespace(o.namespace)
		unstructured.RemoveNestedField(u.Object, "status")
		_, err := o.apps.Apply(ctx, a.Metadata.Name, u, metav1.ApplyOptions{FieldManager: appobjects.FieldManager, Force: true})
		if err != nil {
			return fmt.Errorf("write Application object %s: %w", o.key(a.Metadata.Name), err)
		}
		return o.waitTaken(ctx, c, a)
	}
}

func (o *controlObjects) key(name string) string { return appobjects.Key(o.namespace, name) }

// waitTaken waits until app a runs the spec of its object, or the object
// says why not.
func (o *controlObjects) waitTaken(ctx context.Context, c client.Client, a *app.Application) error {
	ctx, cancel := context.WithTimeout(ctx, takenWithin)
	defer cancel()
	key := o.key(a.Metadata.Name)
	for {
		v, err := ferryclient.Query(ctx, c, a.Metadata.Name)
		if err == nil && v.Owner != nil && v.Owner.Object == key && v.Application.SpecDigest() == a.SpecDigest() {
			return nil
		}
		if u, err := o.apps.Get(ctx, a.Metadata.Name, metav1.GetOptions{}); err == nil {
			if msg := objectProblem(u); msg != "" {
				return errors.New(msg)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("Application object %s is written, but no control worker took it up within %s: is one running with --control-namespace %s?",
				key, takenWithin, o.namespace)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// objectProblem is the message of the object's InvalidSpecError condition.
func objectProblem(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == appobjects.ConditionInvalidSpec {
			msg, _ := m["message"].(string)
			return msg
		}
	}
	return ""
}

// delete deletes the Application object of app name as argocd app delete
// does: the resources finalizer set as cascade and policy ask, then the
// object, and it waits until the object is gone. found is false when
// there is no such object: the app is not an object's.
func (o *controlObjects) delete(ctx context.Context, name string, cascade bool, policy string) (found bool, err error) {
	u, err := o.apps.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	finalizers, err := deleteFinalizers(u.GetFinalizers(), cascade, policy)
	if err != nil {
		return true, fmt.Errorf("app %q: %w", name, err)
	}
	u.SetFinalizers(finalizers)
	if _, err := o.apps.Update(ctx, u, metav1.UpdateOptions{FieldManager: appobjects.FieldManager}); err != nil {
		return true, fmt.Errorf("set the finalizers of Application object %s: %w", o.key(name), err)
	}
	if err := o.apps.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return true, err
	}
	for {
		if _, err := o.apps.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// deleteFinalizers are the object's finalizers for a deletion that cascades
// or not, with propagation policy ("": the finalizer's, else foreground).
func deleteFinalizers(fs []string, cascade bool, policy string) ([]string, error) {
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
		return nil, fmt.Errorf("--propagation-policy orphan: an Application object's finalizer says foreground or background only: give one of them, or --cascade=false")
	case policy == app.PropagationBackground, policy == "" && current == app.PropagationBackground:
		return append(kept, app.BackgroundFinalizer), nil
	}
	return append(kept, app.ResourcesFinalizer), nil
}
