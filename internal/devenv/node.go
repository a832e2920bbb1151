package devenv

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// createNode registers the region's fake Node; kwok manages it because of
// its annotation and reports it Ready.
func (r *region) createNode(ctx context.Context, cs kubernetes.Interface) error {
	// Room for the largest fleet the benchmarks run (10,000 apps, a pod or
	// more each): at 1,000 pods, the 1,001st app's Deployment stayed
	// Progressing, its pod Pending.
	plenty := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100000"),
		corev1.ResourceMemory: resource.MustParse("100Ti"),
		corev1.ResourcePods:   resource.MustParse("100000"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: r.nodeName,
			Labels: map[string]string{
				"kubernetes.io/os":              "linux",
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/hostname":        r.nodeName,
				"type":                          "kwok",
				"topology.kubernetes.io/region": r.name,
			},
			Annotations: map[string]string{fakeNodeAnnotation: "fake"},
		},
		Status: corev1.NodeStatus{Allocatable: plenty, Capacity: plenty},
	}
	_, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("region %s: create fake Node %s: %w", r.name, r.nodeName, err)
	}
	return nil
}

func nodeReady(ctx context.Context, cs kubernetes.Interface, name string) error {
	node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return nil
			}
			return fmt.Errorf("node %s: Ready is %s (%s)", name, c.Status, c.Message)
		}
	}
	return fmt.Errorf("node %s has no Ready condition yet", name)
}
