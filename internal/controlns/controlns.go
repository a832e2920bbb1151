// Package controlns reads the control namespace of the control cluster,
// where Argo CD keeps its ConfigMaps, Secrets and the resources its
// ApplicationSet generators name, for the workers' activities.
package controlns

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Reader reads one namespace of the control cluster.
type Reader struct {
	Kube      kubernetes.Interface
	Dynamic   dynamic.Interface
	Namespace string
}

// New reads namespace ns of the cluster at rc.
func New(rc *rest.Config, ns string) (*Reader, error) {
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &Reader{Kube: kube, Dynamic: dyn, Namespace: ns}, nil
}

// ConfigMap is the data of the named ConfigMap.
func (r *Reader) ConfigMap(ctx context.Context, name string) (map[string]string, error) {
	cm, err := r.Kube.CoreV1().ConfigMaps(r.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, r.readError("ConfigMap", name, err)
	}
	return cm.Data, nil
}

// Secret is the data of the named Secret. An error never holds a value.
func (r *Reader) Secret(ctx context.Context, name string) (map[string]string, error) {
	s, err := r.Kube.CoreV1().Secrets(r.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, r.readError("Secret", name, err)
	}
	data := make(map[string]string, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		data[k] = string(v)
	}
	return data, nil
}

// List lists the resources of gvr in the namespace: the one named name, or
// with name empty those selector selects.
func (r *Reader) List(ctx context.Context, gvr schema.GroupVersionResource, name, selector string) ([]map[string]any, error) {
	opts := metav1.ListOptions{LabelSelector: selector}
	if name != "" {
		opts = metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	}
	list, err := r.Dynamic.Resource(gvr).Namespace(r.Namespace).List(ctx, opts)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("list %s in namespace %s: the control cluster serves no such resource: is its CustomResourceDefinition applied, and is the ConfigMap's kind the resource's plural name (such as placementdecisions)?",
			resourceName(gvr), r.Namespace)
	case err != nil:
		return nil, fmt.Errorf("list %s in namespace %s: %w", resourceName(gvr), r.Namespace, err)
	}
	out := make([]map[string]any, len(list.Items))
	for i, item := range list.Items {
		out[i] = item.Object
	}
	return out, nil
}

func (r *Reader) readError(kind, name string, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s %s not found in namespace %s: create it there", kind, name, r.Namespace)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("read %s %s in namespace %s: forbidden: let the worker's account get %ss there", kind, name, r.Namespace, kind)
	}
	return fmt.Errorf("read %s %s in namespace %s: %w", kind, name, r.Namespace, err)
}

func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource + "/" + gvr.Version
	}
	return gvr.Resource + "." + gvr.Group + "/" + gvr.Version
}
