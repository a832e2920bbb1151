package kube

import (
	"context"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Actions a Change reports, as in app.ResourceResult.Action.
const (
	ActionCreated    = "created"
	ActionConfigured = "configured"
	ActionUnchanged  = "unchanged"
	ActionPruned     = "pruned"
	ActionFailed     = "failed"
)

// ApplyRequest is one sync of one Application to one cluster.
type ApplyRequest struct {
	// App is the Application's name. It becomes the ferry.dev/app label
	// and the prefix of every tracking id, so it must be a valid label value.
	App string
	// Namespace is the destination namespace: namespaced objects that name
	// none are put there. Cluster-scoped objects never get one.
	Namespace string
	// Objects is the desired state. Apply works on copies; the objects are
	// not modified.
	Objects []*unstructured.Unstructured
	// PreviousKeys are the objects the previous sync applied (from the
	// app's status). Pruning and Compare look for leftovers among the kinds
	// of Objects and of PreviousKeys, so a kind removed entirely from the
	// desired state is still found. Without it, only the kinds still in
	// Objects are searched.
	PreviousKeys []app.ResourceKey
	// Prune deletes the app's tracked objects that Objects no longer has.
	// Pruning is skipped when any object failed to apply, so a half-applied
	// sync never also removes things.
	Prune bool
	// DryRun sends every request as a server-side dry run: the API server
	// validates, defaults and admits, and nothing is stored.
	DryRun bool
	// CreateNamespace creates Namespace when it does not exist, as Argo CD's
	// CreateNamespace=true sync option. That namespace is not tracked, so it
	// is never pruned nor deleted with the app.
	CreateNamespace bool
}

// Change is what Apply did, or would do in a dry run, to one object.
type Change struct {
	// Key names the object, with the namespace it was applied to.
	Key app.ResourceKey
	// Action is one of ActionCreated, ActionConfigured, ActionUnchanged,
	// ActionPruned, ActionFailed.
	Action string
	// Message says why, in a few words: which fields changed, or the error.
	// It never holds field values.
	Message string
}

// ChangeSet lists the Changes of one Apply: in apply order, then prunes.
type ChangeSet struct {
	Entries []Change
}

// Results converts the change set to the app's status entries for region.
func (cs *ChangeSet) Results(region string) []app.ResourceResult {
	if cs == nil {
		return nil
	}
	out := make([]app.ResourceResult, len(cs.Entries))
	for i, e := range cs.Entries {
		out[i] = app.ResourceResult{ResourceKey: e.Key, Region: region, Action: e.Action, Message: e.Message}
	}
	return out
}

// Apply brings the cluster to req.Objects with server-side apply under the
// field manager Options.FieldManager, with Force: Git is the source of
// truth, so Ferry takes over any field its manifests set, even one another
// manager (kubectl edit, a script) owns. Fields the manifests leave out stay
// with their owners, which is what lets an HPA keep spec.replicas when the
// manifest does not set it. (Argo CD's server-side apply forces conflicts
// the same way.)
//
// Objects go in rank order (order.go), a group of equal rank in parallel.
// Whether an object was created, configured or unchanged comes from a Get
// before and the apply's response: configured when the object (less what
// normalize drops) or Ferry's own managedFields entry changed. The
// resourceVersion is not used: a controller's status write between the Get
// and the apply bumps it, and would make a no-op look like a change.
// An object that fails does not stop the others: its Change is failed and
// Apply returns, with the full ChangeSet, an *ObjectErrors wrapping one
// *ObjectError per failure. IsInvalid(err) tells when retrying cannot help.
// An object whose tracking id names another Ferry application is refused;
// one without any tracking id is adopted.
func (c *Cluster) Apply(ctx context.Context, req ApplyRequest) (*ChangeSet, error) {
	if err := validAppName(req.App); err != nil {
		return nil, err
	}
	cs := &ChangeSet{}
	var errs []*ObjectError
	// pending holds namespaces that exist only as a dry run's prediction:
	// the objects in them cannot be dry-run, so they are reported created.
	pending := map[string]bool{}

	if req.CreateNamespace && req.Namespace != "" && !desiresNamespace(req.Objects, req.Namespace) {
		ch, err := c.ensureNamespace(ctx, req.Namespace, req.DryRun)
		if err != nil {
			errs = append(errs, err)
			cs.Entries = append(cs.Entries, Change{Key: err.Key, Action: ActionFailed, Message: err.message()})
		} else if ch != nil {
			cs.Entries = append(cs.Entries, *ch)
			if req.DryRun {
				pending[req.Namespace] = true
			}
		}
	}

	desired := map[app.ResourceKey]bool{}
	for _, group := range groupByRank(req.Objects) {
		tasks := c.prepare(req.App, req.Namespace, group)
		runLimited(c.opts.Concurrency, len(tasks), func(i int) {
			if tasks[i].err == nil {
				c.applyOne(ctx, tasks[i], req.DryRun, pending)
			}
		})
		var crds []string
		for _, t := range tasks {
			desired[identity(t.key)] = true
			if t.err != nil {
				errs = append(errs, t.err)
				cs.Entries = append(cs.Entries, Change{Key: t.key, Action: ActionFailed, Message: t.err.message()})
				continue
			}
			cs.Entries = append(cs.Entries, t.change)
			if req.DryRun && t.key.Group == "" && t.key.Kind == "Namespace" && t.change.Action == ActionCreated {
				pending[t.key.Name] = true
			}
			if rankOf(t.obj) == crdRank && t.key.Kind == "CustomResourceDefinition" {
				crds = append(crds, t.key.Name)
			}
		}
		if len(crds) > 0 && !req.DryRun {
			c.waitEstablished(ctx, crds)
		}
	}

	if req.Prune && len(errs) == 0 {
		changes, perrs := c.prune(ctx, req, desired)
		cs.Entries = append(cs.Entries, changes...)
		errs = append(errs, perrs...)
	}
	return cs, objectErrors(errs)
}

// applyOne applies t's object and records the Change, or the error, in t.
func (c *Cluster) applyOne(ctx context.Context, t *task, dryRun bool, pending map[string]bool) {
	op := "apply"
	if dryRun {
		op = "dry-run apply"
		if pending[t.key.Namespace] {
			t.change = Change{Key: t.key, Action: ActionCreated, Message: "dry run: its namespace does not exist yet"}
			return
		}
	}
	ri := c.resource(t.mapping, t.key.Namespace)
	existing, err := ri.Get(ctx, t.key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		t.err = newObjectError(t.key, "get", err)
		return
	}
	if existing != nil {
		if owner := trackedBy(existing); owner != "" && owner != t.app {
			t.err = newObjectError(t.key, op, invalidf("already tracked by Ferry application %q: remove it from that application first", owner))
			return
		}
	}
	opts := metav1.ApplyOptions{FieldManager: c.opts.FieldManager, Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	applied, err := ri.Apply(ctx, t.key.Name, t.obj, opts)
	if err != nil {
		t.err = newObjectError(t.key, op, err)
		return
	}
	t.change = Change{Key: t.key}
	if existing == nil {
		t.change.Action = ActionCreated
	} else if changed := diffPaths(normalize(existing), normalize(applied), c.opts.DiffDepth); len(changed) > 0 || c.ownershipChanged(existing, applied) {
		t.change.Action = ActionConfigured
		if len(changed) > 0 {
			t.change.Message = "changed " + summarizePaths(changed)
		}
		if existing.GetAnnotations()[AnnotationTrackingID] == "" {
			t.change.Message = joinMessage("adopted", t.change.Message)
		}
	} else {
		t.change.Action = ActionUnchanged
	}
	if dryRun {
		t.change.Message = joinMessage("dry run", t.change.Message)
	}
}

// ensureNamespace creates the destination namespace when it is missing. It
// returns nil when the namespace exists.
func (c *Cluster) ensureNamespace(ctx context.Context, name string, dryRun bool) (*Change, *ObjectError) {
	key := app.ResourceKey{Version: "v1", Kind: "Namespace", Name: name}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	m, err := c.mapping(ns.GroupVersionKind())
	if err != nil {
		return nil, newObjectError(key, "create namespace", err)
	}
	ri := c.resource(m, "")
	if _, err := ri.Get(ctx, name, metav1.GetOptions{}); err == nil {
		return nil, nil
	} else if !apierrors.IsNotFound(err) {
		return nil, newObjectError(key, "get", err)
	}
	opts := metav1.ApplyOptions{FieldManager: c.opts.FieldManager, Force: true}
	msg := "destination namespace (CreateNamespace); not pruned with the app"
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
		msg = joinMessage("dry run", msg)
	}
	if _, err := ri.Apply(ctx, name, ns, opts); err != nil {
		return nil, newObjectError(key, "create namespace", err)
	}
	return &Change{Key: key, Action: ActionCreated, Message: msg}, nil
}

// ownershipChanged tells whether the apply changed the managedFields entry
// of Ferry's own apply: the fields it owns, or their time, which the API
// server bumps only on a write.
func (c *Cluster) ownershipChanged(before, after *unstructured.Unstructured) bool {
	return !reflect.DeepEqual(c.ownEntry(before), c.ownEntry(after))
}

func (c *Cluster) ownEntry(obj *unstructured.Unstructured) *metav1.ManagedFieldsEntry {
	for _, e := range obj.GetManagedFields() {
		if e.Manager == c.opts.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" {
			return &e
		}
	}
	return nil
}

func desiresNamespace(objs []*unstructured.Unstructured, name string) bool {
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group == "" && gvk.Kind == "Namespace" && o.GetName() == name {
			return true
		}
	}
	return false
}

func joinMessage(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return fmt.Sprintf("%s: %s", a, b)
}
