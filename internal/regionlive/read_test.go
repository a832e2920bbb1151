package regionlive_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

func configMap(ns, name string) *corev1.ConfigMap {
	m := meta(name, ns+"-"+name, nil)
	m.Namespace = ns
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: m}
}

// readTreeCase is an app with many ConfigMaps in shop (read with one
// list), one of them missing, and objects read by name: a Service, a
// ConfigMap of another namespace that shop also has, and EndpointSlices
// the cluster does not serve.
func readTreeCase(t *testing.T) (*regionlive.Region, *dynamicfake.FakeDynamicClient, []app.ResourceKey) {
	objs := []runtime.Object{
		&corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta("web", "s1", nil)},
		configMap("other", "cm-2"), configMap("shop", "not-the-app's"),
	}
	for i := range 5 {
		objs = append(objs, configMap("shop", fmt.Sprintf("cm-%d", i)))
	}
	r := fakeRegion(t, objs...)
	cm := func(ns, name string) app.ResourceKey {
		return app.ResourceKey{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: name}
	}
	slice := func(name string) app.ResourceKey {
		return app.ResourceKey{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice", Namespace: "shop", Name: name}
	}
	managed := []app.ResourceKey{
		cm("shop", "cm-4"), {Version: "v1", Kind: "Service", Namespace: "shop", Name: "web"}, cm("shop", "cm-0"),
		cm("shop", "gone"), cm("other", "cm-2"), cm("shop", "cm-2"), slice("a"), slice("b"), slice("c"), slice("d"),
		cm("shop", "cm-1"), cm("shop", "cm-3"),
	}
	return r, r.Cluster.Dynamic().(*dynamicfake.FakeDynamicClient), managed
}

// names are the nodes as namespace/Kind/name.
func names(nodes []regionlive.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Namespace+"/"+n.Kind+"/"+n.Name)
	}
	return out
}

// requests are the fake's requests as "verb resource namespace[/name]".
func requests(dyn *dynamicfake.FakeDynamicClient) []string {
	var out []string
	for _, a := range dyn.Actions() {
		s := a.GetVerb() + " " + a.GetResource().Resource + " " + a.GetNamespace()
		if g, ok := a.(clienttesting.GetAction); ok {
			s += "/" + g.GetName()
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// childLists are listChildren's requests in shop and other.
var childLists = []string{
	"list controllerrevisions other", "list controllerrevisions shop", "list endpoints other", "list endpoints shop",
	"list jobs other", "list jobs shop", "list pods other", "list pods shop", "list replicasets other", "list replicasets shop",
}

var wantTree = []string{"shop/ConfigMap/cm-4", "shop/Service/web", "shop/ConfigMap/cm-0", "other/ConfigMap/cm-2",
	"shop/ConfigMap/cm-2", "shop/ConfigMap/cm-1", "shop/ConfigMap/cm-3"}

func TestTreeListsAKindsManyObjectsInANamespace(t *testing.T) {
	r, dyn, managed := readTreeCase(t)
	nodes, err := r.Tree(context.Background(), managed)
	require.NoError(t, err)
	if d := cmp.Diff(wantTree, names(nodes)); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
	want := slices.Concat(childLists, []string{"get configmaps other/cm-2", "get services shop/web", "list configmaps shop"})
	slices.Sort(want)
	if d := cmp.Diff(want, requests(dyn)); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

// A user who may get ConfigMaps but not list them reads the same tree, by
// name; an object that cannot be read is named in the error, and the
// others are still in the tree.
func TestTreeReadsByNameWhenTheListFails(t *testing.T) {
	r, dyn, managed := readTreeCase(t)
	dyn.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("no list"))
	})
	nodes, err := r.Tree(context.Background(), managed)
	require.NoError(t, err)
	if d := cmp.Diff(wantTree, names(nodes)); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
	want := slices.Concat(childLists, []string{"get configmaps other/cm-2", "get services shop/web", "list configmaps shop",
		"get configmaps shop/cm-4", "get configmaps shop/cm-0", "get configmaps shop/gone", "get configmaps shop/cm-2",
		"get configmaps shop/cm-1", "get configmaps shop/cm-3"})
	slices.Sort(want)
	if d := cmp.Diff(want, requests(dyn)); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}

	dyn.PrependReactor("get", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.(clienttesting.GetAction).GetName() != "cm-0" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewServiceUnavailable("etcd is away")
	})
	nodes, err = r.Tree(context.Background(), managed)
	require.EqualError(t, err, "ConfigMap shop/cm-0: etcd is away")
	if d := cmp.Diff(slices.DeleteFunc(slices.Clone(wantTree), func(s string) bool { return s == "shop/ConfigMap/cm-0" }), names(nodes)); d != "" {
		t.Errorf("tree (-want +got):\n%s", d)
	}
}
