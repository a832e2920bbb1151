package kube

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// ObjectStates is one object of an app in every state Argo CD's
// managed-resources shows: as Git wants it, as it runs, and both sides of
// the comparison. Secret values are masked in all of them, consistently:
// equal values get equal masks.
type ObjectStates struct {
	Key app.ResourceKey
	// Target is the desired object as a sync sends it; nil when it is no
	// longer desired.
	Target map[string]any
	// Live is the object in the cluster, without managedFields; nil when
	// it is missing.
	Live map[string]any
	// NormalizedLive and Predicted are the comparison's sides: live, and
	// what a sync would make of it (a server-side dry run), both
	// normalised and without what ignoreDifferences ignores.
	NormalizedLive, Predicted map[string]any
	// Modified: the sides differ (the object is OutOfSync).
	Modified bool
	// Message says why the object could not be compared, or that it is
	// missing or no longer desired; "" otherwise.
	Message string
}

// States compares like Diff, always against the API server, and returns
// every desired object (hooks left out) and every tracked object no longer
// desired, with their states.
func (c *Cluster) States(ctx context.Context, req CompareRequest) ([]ObjectStates, error) {
	if err := validAppName(req.App); err != nil {
		return nil, err
	}
	tasks := c.prepare(req.App, req.Namespace, req.Options, req.Ignore, req.Objects)
	ordered := applyOrder(tasks)
	out := make([]ObjectStates, len(ordered))
	runLimited(c.opts.Concurrency, len(ordered), func(i int) {
		t := ordered[i]
		if t.err != nil || !c.mapTask(t) {
			return
		}
		p, ok := c.predictOne(ctx, t)
		if !ok {
			return
		}
		res := diff.Compare(p.live, p.predicted, req.Ignore)
		out[i] = ObjectStates{Key: t.key, Target: t.obj.DeepCopy().Object, Live: withoutManagedFields(p.live),
			NormalizedLive: res.Live, Predicted: res.Desired, Modified: !res.Equal(), Message: p.message}
	})
	var errs []*ObjectError
	want := map[app.ResourceKey]bool{}
	for i, t := range ordered {
		want[identity(t.key)] = true
		if t.err != nil {
			errs = append(errs, t.err)
			out[i] = ObjectStates{Key: t.key, Target: t.obj.DeepCopy().Object, Modified: true, Message: t.err.message()}
		}
	}
	for _, t := range tasks {
		want[identity(t.key)] = true
	}
	live, lerrs := c.listTracked(ctx, req.App, kindsOf(req.Objects, req.Inventory))
	for _, obj := range live {
		if want[identity(KeyOf(obj))] || syncplan.IsHook(obj) {
			continue
		}
		out = append(out, ObjectStates{Key: KeyOf(obj), Live: withoutManagedFields(obj), NormalizedLive: diff.Compare(obj, nil, req.Ignore).Live,
			Modified: true, Message: "no longer desired: a sync with prune deletes it"})
	}
	for i := range out {
		if diff.IsSecret(out[i].Key.Group, out[i].Key.Kind) {
			// kubectl apply keeps a copy of the whole Secret there.
			dropAnnotation(out[i].Target, lastApplied)
			dropAnnotation(out[i].Live, lastApplied)
			diff.MaskSecret(out[i].Target, out[i].Live, out[i].NormalizedLive, out[i].Predicted)
		}
	}
	return out, objectErrors(append(errs, lerrs...))
}

// withoutManagedFields is obj's content without metadata.managedFields, a
// copy; nil for nil.
func withoutManagedFields(obj *unstructured.Unstructured) map[string]any {
	if obj == nil {
		return nil
	}
	obj = obj.DeepCopy()
	obj.SetManagedFields(nil)
	return obj.Object
}

// lastApplied is where kubectl apply keeps the object it applied.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// dropAnnotation removes one annotation from an object's content.
func dropAnnotation(obj map[string]any, name string) {
	if obj != nil {
		unstructured.RemoveNestedField(obj, "metadata", "annotations", name)
	}
}
