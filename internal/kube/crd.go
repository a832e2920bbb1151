package kube

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// waitEstablished waits, up to Options.CRDEstablishTimeout, until the named
// CRDs are Established, then forgets cached discovery so their kinds map.
// It does not fail: a CRD that is still not ready makes its custom
// resources fail to apply, with their own errors.
func (c *Cluster) waitEstablished(ctx context.Context, names []string) {
	defer c.mapper.Reset()
	if c.opts.CRDEstablishTimeout <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.CRDEstablishTimeout)
	defer cancel()
	waiting := append([]string(nil), names...)
	_ = Poll(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		var still []string
		for _, name := range waiting {
			crd, err := c.dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil || !established(crd) {
				still = append(still, name)
			}
		}
		waiting = still
		return len(waiting) == 0, nil
	})
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}
