package regionlive

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	namespaces := map[string]bool{}
	var failed []error
	objs, errs := r.getAll(ctx, managed)
	for i, k := range managed {
		if k.Namespace != "" {
			namespaces[k.Namespace] = true
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
	candidates, err := r.listChildren(ctx, namespaces)
	failed = append(failed, err)
	var children []Node
	for added := true; added; {
		added = false
		for _, obj := range candidates {
			if _, done := inTree[obj.GetUID()]; done {
				continue
			}
			var parents []Ref
			for _, o := range obj.GetOwnerReferences() {
				if p, ok := inTree[o.UID]; ok {
					parents = append(parents, p)
				}
			}
			if len(parents) > 0 {
				children = append(children, r.node(obj, parents))
				inTree[obj.GetUID()] = refOf(obj)
				added = true
			}
		}
	}
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

// getConcurrency is how many objects one tree reads at once: an app of
// hundreds of objects is read in a few round trips' time, not hundreds.
const getConcurrency = 16

// getAll reads the objects of keys (Get), in their order.
func (r *Region) getAll(ctx context.Context, keys []app.ResourceKey) ([]*unstructured.Unstructured, []error) {
	objs, errs := make([]*unstructured.Unstructured, len(keys)), make([]error, len(keys))
	var g errgroup.Group
	g.SetLimit(getConcurrency)
	for i, k := range keys {
		g.Go(func() error {
			objs[i], errs[i] = r.Get(ctx, k)
			return nil
		})
	}
	_ = g.Wait() // each read's error is in errs
	return objs, errs
}

// listChildren lists the objects of childKinds in namespaces, those that
// have an owner.
func (r *Region) listChildren(ctx context.Context, namespaces map[string]bool) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	var failed []error
	for _, gk := range childKinds {
		for ns := range namespaces {
			ri, err := r.resource(gk, "", ns)
			if meta.IsNoMatchError(err) {
				break
			}
			if err != nil {
				failed = append(failed, fmt.Errorf("list %s: %w", gk.Kind, err))
				break
			}
			list, err := ri.List(ctx, metav1.ListOptions{})
			if err != nil {
				failed = append(failed, fmt.Errorf("list %s in %s: %w", gk.Kind, ns, err))
				continue
			}
			for i := range list.Items {
				if len(list.Items[i].GetOwnerReferences()) > 0 {
					out = append(out, &list.Items[i])
				}
			}
		}
	}
	return out, errors.Join(failed...)
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
