package kube

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// ObjectDiff is the difference of one object, for people to read.
type ObjectDiff struct {
	// Key names the object.
	Key app.ResourceKey
	// Sync is OutOfSync, or Unknown when the object could not be compared.
	Sync app.SyncStatusCode
	// Message says why in a few words, as ResourceState.Message does.
	Message string
	// Unified is the unified diff, live against desired, Secret values
	// masked, cut at the request's limit.
	Unified string
}

// Diff compares like Compare, always against the API server (never the live
// cache nor a cached result), and returns the objects that differ, each
// with a unified diff of at most limit bytes (0: no limit). Objects that
// are missing show as all added, objects no longer desired as all removed.
func (c *Cluster) Diff(ctx context.Context, req CompareRequest, limit int) ([]ObjectDiff, error) {
	if err := validAppName(req.App); err != nil {
		return nil, err
	}
	tasks := c.prepare(req.App, req.Namespace, req.Options, req.Ignore, req.Objects)
	ordered := applyOrder(tasks)
	out := make([]*ObjectDiff, len(ordered))
	runLimited(c.opts.Concurrency, len(ordered), func(i int) {
		t := ordered[i]
		if t.err == nil && c.mapTask(t) {
			out[i] = c.diffOne(ctx, t, req.Ignore, limit)
		}
	})
	var diffs []ObjectDiff
	var errs []*ObjectError
	for i, t := range ordered {
		if t.err != nil {
			errs = append(errs, t.err)
			diffs = append(diffs, ObjectDiff{Key: t.key, Sync: app.SyncStatusUnknown, Message: t.err.message()})
			continue
		}
		if out[i] != nil {
			diffs = append(diffs, *out[i])
		}
	}
	want := map[app.ResourceKey]bool{}
	for _, t := range tasks {
		want[identity(t.key)] = true
	}
	live, lerrs := c.listTracked(ctx, req.App, kindsOf(req.Objects, req.Inventory))
	for _, obj := range live {
		if want[identity(KeyOf(obj))] || syncplan.IsHook(obj) {
			continue
		}
		text, err := diff.Compare(obj, nil, req.Ignore).Unified(keyString(KeyOf(obj)), limit)
		d := ObjectDiff{Key: KeyOf(obj), Sync: app.SyncStatusOutOfSync, Message: "no longer desired: a sync with prune deletes it", Unified: text}
		if err != nil {
			d.Message = err.Error()
		}
		diffs = append(diffs, d)
	}
	return diffs, objectErrors(append(errs, lerrs...))
}

// diffOne returns t's difference, nil when there is none; failures go to
// t.err.
func (c *Cluster) diffOne(ctx context.Context, t *task, rules *diff.Rules, limit int) *ObjectDiff {
	p, ok := c.predictOne(ctx, t)
	if !ok {
		return nil
	}
	res := diff.Compare(p.live, p.predicted, rules)
	if res.Equal() {
		return nil
	}
	d := &ObjectDiff{Key: t.key, Sync: app.SyncStatusOutOfSync, Message: p.message}
	if d.Message == "" {
		d.Message = "differs at " + diff.Summarize(res.Paths(c.opts.DiffDepth))
	}
	var err error
	if d.Unified, err = res.Unified(keyString(t.key), limit); err != nil {
		d.Message = err.Error()
	}
	return d
}

// prediction is an object as it runs and as a sync would make it.
type prediction struct {
	live, predicted *unstructured.Unstructured
	// message says why predicted is the manifest itself, or that the
	// object is missing; "" otherwise.
	message string
}

// predictOne reads t's live object, always from the API server, and
// predicts what a sync makes of it (a server-side dry run); failures go to
// t.err.
func (c *Cluster) predictOne(ctx context.Context, t *task) (prediction, bool) {
	live, err := c.getFresh(ctx, t)
	if err != nil {
		t.err = newObjectError(t.key, "get", err)
		return prediction{}, false
	}
	p := prediction{live: live}
	p.predicted, err = c.write(ctx, t, live, true)
	switch {
	case err != nil && live == nil:
		// Its namespace may not exist yet: show the manifest itself.
		p.predicted, p.message = t.obj, "missing (shown as in Git: a dry run was refused: "+newObjectError(t.key, "dry-run apply", err).Err.Error()+")"
	case err != nil && IsImmutable(err):
		p.message = "differs in a field that cannot change in place (Force=true deletes and re-creates): " + newObjectError(t.key, "dry-run apply", err).Err.Error()
		p.predicted = t.obj
	case err != nil:
		t.err = newObjectError(t.key, "dry-run apply", err)
		return prediction{}, false
	case live == nil:
		p.message = "missing"
	}
	return p, true
}
