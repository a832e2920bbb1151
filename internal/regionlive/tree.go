package regionlive

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Node is one object of Argo CD's resource tree (its ResourceNode), in the
// region it runs in.
type Node struct {
	Group           string     `json:"group,omitempty"`
	Version         string     `json:"version"`
	Kind            string     `json:"kind"`
	Namespace       string     `json:"namespace,omitempty"`
	Name            string     `json:"name"`
	UID             string     `json:"uid,omitempty"`
	ParentRefs      []Ref      `json:"parentRefs,omitempty"`
	Info            []InfoItem `json:"info,omitempty"`
	ResourceVersion string     `json:"resourceVersion,omitempty"`
	// Images are the container images of a Pod.
	Images    []string `json:"images,omitempty"`
	Health    *Health  `json:"health,omitempty"`
	CreatedAt string   `json:"createdAt,omitempty"` // RFC3339
	// Region is Ferry's: the region the object runs in.
	Region string `json:"region"`
}

// Ref names an owner of a Node (Argo CD's ResourceRef).
type Ref struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

// InfoItem is a line of what the UI shows of a node: "Containers" "1/2".
type InfoItem struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Health is a node's health and why (Argo CD's HealthStatus).
type Health struct {
	Status  app.HealthStatusCode `json:"status,omitempty"`
	Message string               `json:"message,omitempty"`
}

// childKinds are the kinds whose objects the tree shows under their owners,
// as Argo CD commonly shows them.
var childKinds = []schema.GroupKind{
	{Group: "apps", Kind: "ReplicaSet"},
	{Kind: "Pod"},
	{Group: "apps", Kind: "ControllerRevision"},
	{Group: "batch", Kind: "Job"},
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"},
	{Kind: "Endpoints"},
}

// revisionAnnotation numbers a Deployment's rollouts and its ReplicaSets.
const revisionAnnotation = "deployment.kubernetes.io/revision"

// Tree returns the region's resource tree of an app: a Node for each of
// managed that exists, in the order given, then their descendants through
// metadata.ownerReferences (childKinds, in the namespaces of managed),
// sorted by kind, namespace and name. Kinds the cluster does not serve are
// skipped.
func (r *Region) Tree(ctx context.Context, managed []app.ResourceKey) ([]Node, error) {
	var nodes []Node
	inTree := map[types.UID]Ref{}
	seen := map[string]bool{}
	var namespaces []string
	var failed []error
	objs, errs := r.readAll(ctx, managed)
	for i, k := range managed {
		if k.Namespace != "" && !seen[k.Namespace] {
			seen[k.Namespace] = true
			namespaces = append(namespaces, k.Namespace)
		}
		obj, err := objs[i], errs[i]
		if err != nil {
			if !meta.IsNoMatchError(err) {
				failed = append(failed, fmt.Errorf("%s: %w", describe(k), err))
			}
			continue
		}
		if obj == nil || inTree[obj.GetUID()].Kind != "" {
			continue
		}
		nodes = append(nodes, r.node(obj, nil))
		inTree[obj.GetUID()] = refOf(obj)
	}
	sort.Strings(namespaces)
	candidates, err := r.listChildren(ctx, namespaces)
	failed = append(failed, err)
	children := r.descendants(candidates, inTree)
	sort.Slice(children, func(i, j int) bool {
		a, b := children[i], children[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return append(nodes, children...), errors.Join(failed...)
}

// descendants are the nodes of candidates that an object of inTree owns,
// or one of those, and so on; each one's parents are its owners in the
// tree, in the order of its ownerReferences. It adds them to inTree.
func (r *Region) descendants(candidates []*unstructured.Unstructured, inTree map[types.UID]Ref) []Node {
	owned := map[types.UID][]*unstructured.Unstructured{}
	for _, obj := range candidates {
		for _, o := range obj.GetOwnerReferences() {
			owned[o.UID] = append(owned[o.UID], obj)
		}
	}
	var reached []*unstructured.Unstructured
	next := slices.Collect(maps.Keys(inTree))
	for len(next) > 0 {
		uid := next[0]
		next = next[1:]
		for _, obj := range owned[uid] {
			if _, done := inTree[obj.GetUID()]; !done {
				inTree[obj.GetUID()] = refOf(obj)
				reached = append(reached, obj)
				next = append(next, obj.GetUID())
			}
		}
	}
	children := make([]Node, 0, len(reached))
	for _, obj := range reached {
		var parents []Ref
		for _, o := range obj.GetOwnerReferences() {
			if p, ok := inTree[o.UID]; ok {
				parents = append(parents, p)
			}
		}
		children = append(children, r.node(obj, parents))
	}
	return children
}

func refOf(obj *unstructured.Unstructured) Ref {
	gvk := obj.GroupVersionKind()
	return Ref{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: string(obj.GetUID())}
}

// node describes obj as the tree shows it.
func (r *Region) node(obj *unstructured.Unstructured, parents []Ref) Node {
	ref := refOf(obj)
	n := Node{
		Group: ref.Group, Version: ref.Version, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name, UID: ref.UID,
		ParentRefs: parents, ResourceVersion: obj.GetResourceVersion(), Region: r.Name,
	}
	if ts := obj.GetCreationTimestamp(); !ts.IsZero() {
		n.CreatedAt = ts.UTC().Format(time.RFC3339)
	}
	if rev := obj.GetAnnotations()[revisionAnnotation]; rev != "" {
		n.Info = append(n.Info, InfoItem{Name: "Revision", Value: "Rev:" + rev})
	}
	if code, msg := r.Cluster.HealthChecker().Get(obj); code != "" {
		n.Health = &Health{Status: code, Message: msg}
	}
	if ref.Group == "" && ref.Kind == "Pod" {
		var pod corev1.Pod
		if runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &pod) == nil {
			n.Info = append(n.Info, podInfo(&pod)...)
			for _, c := range pod.Spec.Containers {
				n.Images = append(n.Images, c.Image)
			}
		}
	}
	return n
}

// podInfo is what Argo CD shows of a pod: why it is as it is (its phase,
// or what a container waits for or ended with) and how many of its
// containers are ready.
func podInfo(p *corev1.Pod) []InfoItem {
	reason := string(p.Status.Phase)
	if p.Status.Reason != "" {
		reason = p.Status.Reason
	}
	ready := 0
	for _, st := range p.Status.ContainerStatuses {
		switch {
		case st.State.Waiting != nil && st.State.Waiting.Reason != "":
			reason = st.State.Waiting.Reason
		case st.State.Terminated != nil && st.State.Terminated.Reason != "":
			reason = st.State.Terminated.Reason
		}
		if st.Ready {
			ready++
		}
	}
	if p.DeletionTimestamp != nil {
		reason = "Terminating"
	}
	return []InfoItem{
		{Name: "Status Reason", Value: reason},
		{Name: "Containers", Value: fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers))},
	}
}
