package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// task is one desired object on its way to the cluster: a tracked copy,
// placed in its namespace, with its mapping, its sync options, and what
// became of it.
type task struct {
	app string
	obj *unstructured.Unstructured
	key app.ResourceKey
	// mapping is nil for a custom resource whose CRD is in the same desired
	// set and not served yet: it is mapped when its step comes (mapTask).
	mapping *meta.RESTMapping
	// opts are the app's sync options with the object's annotation on top.
	opts app.SyncOptions
	// ignore are the app's ignoreDifferences (RespectIgnoreDifferences).
	ignore *diff.Rules
	// hook objects belong to the hook runner: never applied, compared or
	// pruned here, but they are desired (so never pruned as leftovers).
	hook bool
	// deferred: a kind not served yet, mapped when its wave comes
	// (SkipDryRunOnMissingResource); defaultNS places it then.
	deferred  bool
	defaultNS string
	// change is set by a successful apply; err by any failure.
	change Change
	// inSync: ApplyOutOfSyncOnly found the object in sync and did not
	// write it. It is no change of the sync's, so the change set (the
	// operation's results) leaves it out, as gitops-engine drops the
	// tasks of in-sync resources before it runs any.
	inSync bool
	err    *ObjectError
	// written is the object as the last write (or dry run) returned it.
	written *unstructured.Unstructured
}

// prepare turns desired objects into tasks: copies them, places them,
// marks them as appName's and reads their sync options. An object that
// cannot be placed, has no name, appears twice or has unreadable options
// gets its error here and is not sent.
func (c *Cluster) prepare(appName, defaultNS string, appOpts app.SyncOptions, ignore *diff.Rules, objs []*unstructured.Unstructured) []*task {
	tasks := make([]*task, len(objs))
	pending := crdScopes(objs)
	seen := map[app.ResourceKey][]*task{}
	for i, src := range objs {
		t := &task{app: appName, obj: src.DeepCopy(), opts: appOpts, ignore: ignore, defaultNS: defaultNS}
		tasks[i] = t
		t.hook = syncplan.IsHook(t.obj)
		optsErr := t.readOptions(appOpts)
		m, err := c.place(t.obj, defaultNS, pending)
		if meta.IsNoMatchError(err) && t.opts.SkipDryRunOnMissingResource && optsErr == nil {
			// Its kind may be served by the time its wave comes (a CRD that
			// another app installs): mapped then (mapTask).
			t.deferred, err = true, nil
		}
		t.key = KeyOf(t.obj)
		if t.hook {
			continue
		}
		switch {
		case optsErr != nil:
			t.err = newObjectError(t.key, "read options", optsErr)
			continue
		case err != nil:
			t.err = newObjectError(t.key, "map", err)
			continue
		case t.obj.GetName() == "":
			t.err = newObjectError(t.key, "apply", invalidf("object has no metadata.name"))
			continue
		}
		t.mapping = m
		Track(appName, t.obj)
		id := identity(t.key)
		seen[id] = append(seen[id], t)
	}
	for _, dups := range seen {
		if len(dups) < 2 {
			continue
		}
		for _, t := range dups {
			t.err = newObjectError(t.key, "apply", invalidf("the desired state has this object %d times", len(dups)))
		}
	}
	return tasks
}

// readOptions sets t.opts from the app's options and t's sync-options
// annotation, and checks t's compare-options annotation: an option that is
// unknown, or that Ferry cannot honour, is this object's error (invalid:
// the sync stops before its first write, and a compare shows it).
func (t *task) readOptions(appOpts app.SyncOptions) error {
	if t.hook {
		return nil
	}
	annotations := t.obj.GetAnnotations()
	v, annotated := annotations[app.AnnotationSyncOptions]
	if annotated {
		var err error
		if t.opts, err = appOpts.WithAnnotation(v); err != nil {
			return invalidf("annotation %s: %v", app.AnnotationSyncOptions, err)
		}
	}
	if err := t.opts.Unsupported(); err != nil {
		where := "spec.syncPolicy.syncOptions"
		if annotated {
			where = "annotation " + app.AnnotationSyncOptions
		}
		return invalidf("%s: %v", where, err)
	}
	if v, ok := annotations[app.AnnotationCompareOptions]; ok {
		if _, err := app.ParseCompareOptions(v); err != nil {
			return invalidf("annotation %s: %v", app.AnnotationCompareOptions, err)
		}
	}
	return nil
}

// plan orders the tasks that can be sent; tasks with a bad wave get their
// error. Plan indexes refer to the returned slice.
func plan(tasks []*task) ([]*task, syncplan.Plan) {
	var ok []*task
	var objs []*unstructured.Unstructured
	for _, t := range tasks {
		if t.err == nil && !t.hook {
			ok = append(ok, t)
			objs = append(objs, t.obj)
		}
	}
	p, errs := syncplan.Build(objs)
	for _, e := range errs {
		t := ok[e.Index]
		t.err = newObjectError(t.key, "plan", invalidf("%v", e.Err))
	}
	return ok, p
}

// mapTask resolves the mapping of a task whose CRD was applied since.
func (c *Cluster) mapTask(t *task) bool {
	if t.mapping != nil {
		return true
	}
	m, err := c.mapping(t.obj.GroupVersionKind())
	if err != nil {
		why := "its CustomResourceDefinition is in the same sync but not served yet"
		if t.deferred {
			why = "SkipDryRunOnMissingResource waited for its kind until its wave, and it is still not served"
		}
		t.err = newObjectError(t.key, "map", fmt.Errorf("%w (%s)", err, why))
		return false
	}
	if t.deferred {
		// Placed now that its scope is known, and tracked under that name.
		if _, err := c.place(t.obj, t.defaultNS, nil); err != nil {
			t.err = newObjectError(t.key, "map", err)
			return false
		}
		t.key = KeyOf(t.obj)
		Track(t.app, t.obj)
	}
	t.mapping = m
	return true
}

// crdScopes returns the scope ("Namespaced" or "Cluster") of every kind
// that a CustomResourceDefinition among objs defines.
func crdScopes(objs []*unstructured.Unstructured) map[schema.GroupKind]string {
	out := map[schema.GroupKind]string{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if !syncplan.IsCRD(gvk.Group, gvk.Kind) {
			continue
		}
		group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
		if group != "" && kind != "" {
			out[schema.GroupKind{Group: group, Kind: kind}] = scope
		}
	}
	return out
}

// digest identifies what a dry run of t depends on besides the live
// object: the desired object and the options that change how it is sent.
func (t *task) digest() string {
	h := sha256.New()
	_ = json.NewEncoder(h).Encode(t.obj.Object)
	fmt.Fprintf(h, "replace=%t validate=%t respect=%t", t.opts.Replace, !t.opts.ValidateFalse, t.opts.RespectIgnoreDifferences)
	return hex.EncodeToString(h.Sum(nil))
}

// runLimited calls fn(0..n-1) with at most limit calls at a time and waits
// for all of them. fn records its own failures: one does not stop others.
func runLimited(limit, n int, fn func(i int)) {
	var g errgroup.Group
	g.SetLimit(limit)
	for i := 0; i < n; i++ {
		g.Go(func() error {
			fn(i)
			return nil
		})
	}
	_ = g.Wait()
}
