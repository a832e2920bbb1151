package regionlive_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

// fakeKinds are the kinds the fake API serves; discovery.k8s.io's
// EndpointSlice is left out, as a cluster that does not serve a kind.
var fakeKinds = []struct {
	gvk        schema.GroupVersionKind
	resource   string
	namespaced bool
}{
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "deployments", true},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, "replicasets", true},
	{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ControllerRevision"}, "controllerrevisions", true},
	{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, "jobs", true},
	{schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, "pods", true},
	{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, "services", true},
	{schema.GroupVersionKind{Version: "v1", Kind: "Endpoints"}, "endpoints", true},
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps", true},
}

// fakeRegion is a Region over client-go's fake clients holding objs
// (typed objects with their TypeMeta set).
func fakeRegion(t *testing.T, objs ...runtime.Object) *regionlive.Region {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{}
	var resources []*metav1.APIResourceList
	byGV := map[string]*metav1.APIResourceList{}
	for _, k := range fakeKinds {
		listKinds[k.gvk.GroupVersion().WithResource(k.resource)] = k.gvk.Kind + "List"
		gv := k.gvk.GroupVersion().String()
		if byGV[gv] == nil {
			byGV[gv] = &metav1.APIResourceList{GroupVersion: gv}
			resources = append(resources, byGV[gv])
		}
		byGV[gv].APIResources = append(byGV[gv].APIResources, metav1.APIResource{
			Name: k.resource, Kind: k.gvk.Kind, Namespaced: k.namespaced, Verbs: metav1.Verbs{"get", "list", "patch", "create"}})
	}
	var us []runtime.Object
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		require.NoError(t, err)
		us = append(us, &unstructured.Unstructured{Object: m})
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, us...)
	cluster, err := kube.NewClusterForClients(dyn, &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{Resources: resources}}, kube.DefaultOptions())
	require.NoError(t, err)
	return &regionlive.Region{Name: "us-east-1", Cluster: cluster, Client: kubefake.NewClientset(objs...)}
}
