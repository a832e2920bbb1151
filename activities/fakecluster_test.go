package activities

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/uuid"
	discoveryfake "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/ferry-gitops/ferry/internal/kube"
)

// fakeAPI is a Kubernetes API server in memory, under a real kube.Cluster:
// the decisions of a sync (what is in sync, what to prune, waves and
// hooks) are kube.Cluster's, so the region activities' unit tests fake
// what it talks to, not it. It is client-go's fake dynamic client and
// discovery over an object tracker, with what they lack added here: a
// server-side apply goes through the API server's own field manager
// (k8s.io/apimachinery managedfields), so it merges and owns fields as
// the API server's does; a dry run stores nothing; every write gets a new
// resourceVersion, a new object a uid and a creation time; and a Job
// completes as soon as it is created (the fake is its controller). There
// is no admission, defaulting, validation or garbage collection: a delete
// removes the object at once.
type fakeAPI struct {
	tracker   clienttesting.ObjectTracker
	scheme    *runtime.Scheme
	mapper    map[schema.GroupVersionResource]schema.GroupVersionKind
	dynamic   *dynamicfake.FakeDynamicClient
	resources []*metav1.APIResourceList

	mu      sync.Mutex
	version int // the last resourceVersion
	// writes are the writes sent, dry runs aside, in order, as
	// "<verb> <Kind>/<namespace>/<name>".
	writes []string
}

// fakeKind is a kind the fake serves.
type fakeKind struct {
	gvk        schema.GroupVersionKind
	resource   string
	namespaced bool
}

var fakeKinds = []fakeKind{
	{schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, "namespaces", false},
	{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps", true},
	{schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}, "serviceaccounts", true},
	{schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, "jobs", true},
	{schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, "clusterroles", false},
}

// newFakeAPI is a fake API holding objs.
func newFakeAPI(t *testing.T, objs ...*unstructured.Unstructured) *fakeAPI {
	t.Helper()
	f := &fakeAPI{scheme: runtime.NewScheme(), mapper: map[schema.GroupVersionResource]schema.GroupVersionKind{}}
	listKinds := map[schema.GroupVersionResource]string{}
	for _, k := range fakeKinds {
		f.scheme.AddKnownTypeWithName(k.gvk, &unstructured.Unstructured{})
		f.scheme.AddKnownTypeWithName(k.gvk.GroupVersion().WithKind(k.gvk.Kind+"List"), &unstructured.UnstructuredList{})
		gvr := k.gvk.GroupVersion().WithResource(k.resource)
		f.mapper[gvr] = k.gvk
		listKinds[gvr] = k.gvk.Kind + "List"
		res := metav1.APIResource{Name: k.resource, Kind: k.gvk.Kind, Namespaced: k.namespaced,
			Verbs: metav1.Verbs{"get", "list", "watch", "create", "update", "patch", "delete"}}
		i := slices.IndexFunc(f.resources, func(l *metav1.APIResourceList) bool { return l.GroupVersion == k.gvk.GroupVersion().String() })
		if i < 0 {
			f.resources = append(f.resources, &metav1.APIResourceList{GroupVersion: k.gvk.GroupVersion().String()})
			i = len(f.resources) - 1
		}
		f.resources[i].APIResources = append(f.resources[i].APIResources, res)
	}
	f.tracker = clienttesting.NewObjectTracker(f.scheme, serializer.NewCodecFactory(f.scheme).UniversalDecoder())
	f.dynamic = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(f.scheme, listKinds)
	f.dynamic.PrependReactor("*", "*", f.react)
	for _, o := range objs {
		f.put(t, o)
	}
	return f
}

// cluster is a new kube.Cluster over the fake (a worker that starts),
// whose waits poll every few milliseconds.
func (f *fakeAPI) cluster(t *testing.T) *kube.Cluster {
	t.Helper()
	opts := kube.DefaultOptions()
	opts.HealthPoll = 5 * time.Millisecond
	opts.WaveTimeout = 5 * time.Second
	cluster, err := kube.NewClusterForClients(f.dynamic, &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{Resources: f.resources}}, opts)
	require.NoError(t, err)
	return cluster
}

// react answers every request from the tracker; see fakeAPI.
func (f *fakeAPI) react(action clienttesting.Action) (bool, runtime.Object, error) {
	switch a := action.(type) {
	case clienttesting.PatchActionImpl:
		if a.GetPatchType() != types.ApplyPatchType {
			return true, nil, apierrors.NewBadRequest("the fake API serves only server-side apply patches")
		}
		obj, err := f.apply(a)
		return true, obj, err
	case clienttesting.CreateActionImpl:
		if len(a.CreateOptions.DryRun) > 0 {
			return true, nil, apierrors.NewBadRequest("the fake API does not dry-run a create")
		}
		obj := a.GetObject().(*unstructured.Unstructured).DeepCopy()
		f.created(obj, a.GetResource())
		a.Object = obj
		action = a
	case clienttesting.UpdateActionImpl:
		if len(a.UpdateOptions.DryRun) > 0 {
			return true, nil, apierrors.NewBadRequest("the fake API does not dry-run an update")
		}
		obj := a.GetObject().(*unstructured.Unstructured).DeepCopy()
		obj.SetResourceVersion(f.nextVersion())
		a.Object = obj
		action = a
	}
	handled, obj, err := clienttesting.ObjectReaction(f.tracker)(action)
	if err == nil {
		f.log(action)
	}
	return handled, obj, err
}

// created completes a new object as the API server and its controllers
// would: a uid, a creation time, a resourceVersion, and a Job that has
// run.
func (f *fakeAPI) created(obj *unstructured.Unstructured, gvr schema.GroupVersionResource) {
	obj.SetUID(uuid.NewUUID())
	obj.SetCreationTimestamp(metav1.Now())
	obj.SetResourceVersion(f.nextVersion())
	if gvr.Resource == "jobs" {
		_ = unstructured.SetNestedField(obj.Object, int64(1), "status", "succeeded")
		_ = unstructured.SetNestedSlice(obj.Object, []any{
			map[string]any{"type": "Complete", "status": "True"},
		}, "status", "conditions")
	}
}

func (f *fakeAPI) nextVersion() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.version++
	return strconv.Itoa(f.version)
}

// apply is a server-side apply of a's object, with the API server's field
// manager: it merges into the live object and keeps managedFields. A dry
// run returns the object the apply would make and stores nothing.
func (f *fakeAPI) apply(a clienttesting.PatchActionImpl) (runtime.Object, error) {
	gvr, ns := a.GetResource(), a.GetNamespace()
	gvk := f.mapper[gvr]
	live, err := f.tracker.Get(gvr, ns, a.GetName())
	exists := err == nil
	if apierrors.IsNotFound(err) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		live, err = u, nil
	}
	if err != nil {
		return nil, err
	}
	applied := &unstructured.Unstructured{}
	if err := applied.UnmarshalJSON(a.GetPatch()); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	mgr, err := managedfields.NewDefaultFieldManager(managedfields.NewDeducedTypeConverter(), sameVersion{}, noDefaults{}, f.scheme,
		gvk, gvk.GroupVersion(), "", nil)
	if err != nil {
		return nil, err
	}
	force := a.PatchOptions.Force != nil && *a.PatchOptions.Force
	out, err := mgr.Apply(live, applied, a.PatchOptions.FieldManager, force)
	if err != nil {
		return nil, err
	}
	obj := out.(*unstructured.Unstructured)
	switch {
	case len(a.PatchOptions.DryRun) > 0:
		return obj, nil
	case exists:
		obj.SetResourceVersion(f.nextVersion())
		err = f.tracker.Update(gvr, obj, ns)
	default:
		f.created(obj, gvr)
		err = f.tracker.Create(gvr, obj, ns)
	}
	if err != nil {
		return nil, err
	}
	f.log(a)
	return obj.DeepCopy(), nil
}

// sameVersion is the conversion of a fake that serves one version of each
// kind: none.
type sameVersion struct{}

func (sameVersion) Convert(in, out, _ any) error {
	*out.(*unstructured.Unstructured) = *in.(*unstructured.Unstructured).DeepCopy()
	return nil
}

func (sameVersion) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in.DeepCopyObject(), nil
}

func (sameVersion) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

// log keeps a write in the log of writes.
func (f *fakeAPI) log(action clienttesting.Action) {
	var name string
	switch a := action.(type) {
	case clienttesting.PatchActionImpl:
		name = a.GetName()
	case clienttesting.DeleteActionImpl:
		name = a.GetName()
	case clienttesting.CreateActionImpl:
		name = a.GetObject().(*unstructured.Unstructured).GetName()
	case clienttesting.UpdateActionImpl:
		name = a.GetObject().(*unstructured.Unstructured).GetName()
	default:
		return // a read
	}
	kind := f.mapper[action.GetResource()].Kind
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, fmt.Sprintf("%s %s/%s/%s", action.GetVerb(), kind, action.GetNamespace(), name))
}

// put stores obj as someone else's write would.
func (f *fakeAPI) put(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	obj = obj.DeepCopy()
	gvr := f.resourceOf(t, obj)
	if _, err := f.tracker.Get(gvr, obj.GetNamespace(), obj.GetName()); err == nil {
		obj.SetResourceVersion(f.nextVersion())
		require.NoError(t, f.tracker.Update(gvr, obj, obj.GetNamespace(), metav1.UpdateOptions{FieldManager: "kubectl-edit"}))
		return
	}
	f.created(obj, gvr)
	require.NoError(t, f.tracker.Create(gvr, obj, obj.GetNamespace(), metav1.CreateOptions{FieldManager: "kubectl-create"}))
}

// live is the stored object of kind named namespace/name; nil when there
// is none.
func (f *fakeAPI) live(t *testing.T, kind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	for gvr, gvk := range f.mapper {
		if gvk.Kind == kind {
			obj, err := f.tracker.Get(gvr, namespace, name)
			if apierrors.IsNotFound(err) {
				return nil
			}
			require.NoError(t, err)
			return obj.(*unstructured.Unstructured)
		}
	}
	t.Fatalf("the fake API serves no kind %s", kind)
	return nil
}

// written is the log of writes, and empties it.
func (f *fakeAPI) written() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.writes
	f.writes = nil
	return out
}

func (f *fakeAPI) resourceOf(t *testing.T, obj *unstructured.Unstructured) schema.GroupVersionResource {
	t.Helper()
	for gvr, gvk := range f.mapper {
		if gvk == obj.GroupVersionKind() {
			return gvr
		}
	}
	t.Fatalf("the fake API serves no kind %s", obj.GroupVersionKind())
	return schema.GroupVersionResource{}
}

// kobj builds an object from "apiVersion kind namespace/name" and
// key=value pairs of its data (ConfigMaps) or labels and annotations
// ("label:k=v", "annotation:k=v").
func kobj(id string, fields ...string) *unstructured.Unstructured {
	parts := strings.Fields(id)
	ns, name, found := strings.Cut(parts[2], "/")
	if !found {
		ns, name = "", parts[2]
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(parts[0])
	obj.SetKind(parts[1])
	obj.SetNamespace(ns)
	obj.SetName(name)
	for _, f := range fields {
		where, kv, ok := strings.Cut(f, ":")
		if !ok {
			where, kv = "data", f
		}
		k, v, _ := strings.Cut(kv, "=")
		switch where {
		case "label":
			obj.SetLabels(with(obj.GetLabels(), k, v))
		case "annotation":
			obj.SetAnnotations(with(obj.GetAnnotations(), k, v))
		default:
			_ = unstructured.SetNestedField(obj.Object, v, "data", k)
		}
	}
	return obj
}

func with(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
