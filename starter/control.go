package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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
	return &controlObjects{apps: dyn.Resource(appobjects.Applications), namespace: f.namespace}, nil
}

type controlObjects struct {
	apps      dynamic.NamespaceableResourceInterface
	namespace string
}

// object names the Application object of app appName: its namespace and
// name. An app of the control namespace is called by the object's name, an
// app of another namespace namespace/name.
func (o *controlObjects) object(appName string) (ns, name string) {
	ns, name = app.SplitName(appName)
	if ns == "" {
		ns = o.namespace
	}
	return ns, name
}

// appName is the name of the app of the object name in namespace ns.
func (o *controlObjects) appName(ns, name string) string {
	if ns == "" || ns == o.namespace {
		return name
	}
	return app.QualifiedName(ns, name)
}

// takenWithin: how long apply waits for a control worker to take an object up.
const takenWithin = 2 * time.Minute

// applier writes each app's file as its Application object (server-side
// apply, field manager ferry) and returns once the app runs the object's
// spec, or with the object's InvalidSpecError.
func (o *controlObjects) applier(c client.Client, inputs []applyInput) applyFunc {
	raw := map[string][]byte{}
	for _, in := range inputs {
		raw[appobjects.Key(in.app.Metadata.Namespace, in.app.Metadata.Name)] = in.raw
	}
	return func(ctx context.Context, a *app.Application) error {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw[appobjects.Key(a.Metadata.Namespace, a.Metadata.Name)], &u.Object); err != nil {
			return err
		}
		ns := cmp.Or(a.Metadata.Namespace, o.namespace) // where the file puts it, as kubectl apply does
		u.SetNamespace(ns)
		unstructured.RemoveNestedField(u.Object, "status")
		_, err := o.apps.Namespace(ns).Apply(ctx, a.Metadata.Name, u, metav1.ApplyOptions{FieldManager: appobjects.FieldManager, Force: true})
		if err != nil {
			return fmt.Errorf("write Application object %s: %w", appobjects.Key(ns, a.Metadata.Name), err)
		}
		return o.waitTaken(ctx, c, o.appName(ns, a.Metadata.Name), a.SpecDigest())
	}
}

// waitTaken waits until app appName runs the spec of its object (digest),
// or the object says why not.
func (o *controlObjects) waitTaken(ctx context.Context, c client.Client, appName, digest string) error {
	ctx, cancel := context.WithTimeout(ctx, takenWithin)
	defer cancel()
	ns, name := o.object(appName)
	key := appobjects.Key(ns, name)
	for {
		v, err := ferryclient.Query(ctx, c, appName)
		if err == nil && v.Owner != nil && v.Owner.Object == key && v.Application.SpecDigest() == digest {
			return nil
		}
		if u, err := o.apps.Namespace(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
			if msg := objectProblem(u); msg != "" {
				return errors.New(msg)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("Application object %s is written, but no control worker took it up within %s: is one running with --control-namespace %s%s?",
				key, takenWithin, o.namespace, o.listing(ns))
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// listing is what a worker needs besides --control-namespace to take up
// the objects of namespace ns.
func (o *controlObjects) listing(ns string) string {
	if ns == o.namespace {
		return ""
	}
	return " and --app-namespaces listing " + ns
}

// objectProblem is the message of the object's InvalidSpecError condition,
// when it is about the object's spec as it is: a condition of the spec
// before is not this spec's problem (the worker has not read it yet). A
// status without the generation (a worker before it wrote one) is taken
// as it is.
func objectProblem(u *unstructured.Unstructured) string {
	if seen, found, _ := unstructured.NestedInt64(u.Object, "status", appobjects.ObservedGeneration); found && seen != u.GetGeneration() {
		return ""
	}
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
// does (appobjects.Delete), and waits until the object is gone. found is
// false when there is no such object: the app is not an object's.
func (o *controlObjects) delete(ctx context.Context, appName string, cascade bool, policy string) (found bool, err error) {
	ns, name := o.object(appName)
	objects := o.apps.Namespace(ns)
	found, err = appobjects.Delete(ctx, objects, name, cascade, policy)
	if !found || err != nil {
		if err != nil {
			err = fmt.Errorf("app %q: %w", appName, err)
		}
		return found, err
	}
	for {
		if _, err := objects.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// update writes the edited Application doc of app appName to its object
// key (appobjects.Update), and returns once the app runs the new spec, or
// with the object's InvalidSpecError.
func (o *controlObjects) update(ctx context.Context, c client.Client, appName, key string, edited *app.Application, doc []byte) error {
	ns, name, _ := strings.Cut(key, "/")
	if err := appobjects.Update(ctx, o.apps.Namespace(ns), name, doc, appobjects.FieldManager); err != nil {
		return err
	}
	return o.waitTaken(ctx, c, appName, edited.SpecDigest())
}
