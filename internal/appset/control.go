package appset

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Control reads the control namespace, where Argo CD keeps the ConfigMaps,
// Secrets and duck-typed resources that some generators name. Its errors
// name the object; they never hold a Secret's value.
type Control interface {
	// ConfigMap is the data of the named ConfigMap.
	ConfigMap(ctx context.Context, name string) (map[string]string, error)
	// Secret is the data of the named Secret.
	Secret(ctx context.Context, name string) (map[string]string, error)
	// List lists the resources of gvr, the one named name or, with name
	// empty, those selector (a label selector) selects.
	List(ctx context.Context, gvr schema.GroupVersionResource, name, selector string) ([]map[string]any, error)
}

// control is opts.Control, or an error saying how to give the workers one.
func (g *generation) control(generator, reads string) (Control, error) {
	if g.opts.Control != nil {
		return g.opts.Control, nil
	}
	return nil, fmt.Errorf("the %s generator reads %s in the control namespace, and none is configured: "+
		"run the control worker with --control-namespace (FERRY_CONTROL_NAMESPACE, the namespace of Argo CD's ConfigMaps and Secrets) "+
		"and --control-context (FERRY_CONTROL_CONTEXT) of the control cluster", generator, reads)
}
