package kube

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// CompareRequest asks how far one cluster is from an Application's desired
// state. Its fields mean what ApplyRequest's do.
type CompareRequest struct {
	// App is the Application's name.
	App string
	// Namespace is the destination namespace for namespaced objects that
	// name none.
	Namespace string
	// Objects is the desired state; not modified. Hooks are not compared.
	Objects []*unstructured.Unstructured
	// Inventory: as contract.CompareInput's; its kinds are searched, with
	// those of Objects, for tracked objects no longer desired.
	Inventory []app.ResourceKey
	// Options are the app's sync options: Replace and Validate change how
	// the prediction is made, as they change how a sync writes.
	Options app.SyncOptions
	// Ignore are the app's ignoreDifferences; nil ignores nothing.
	Ignore *diff.Rules
	// Prohibits tells why the app's project does not permit an object
	// ("" when it does; nil permits all). A desired object it refuses is
	// not compared: Unknown, as Argo CD's controller shows a managed
	// resource its project does not permit. A tracked one no longer
	// desired shows the same way, where Argo CD hides it: so that a sync
	// with prune names it when it refuses to delete it, rather than
	// leaving it without a word.
	Prohibits func(app.PlacedObject) string
}

// ResourceState is how one object compares.
type ResourceState struct {
	// Key names the object.
	Key app.ResourceKey
	// Sync is Synced, OutOfSync, or Unknown when it could not be compared.
	Sync app.SyncStatusCode
	// Health is the live object's health; Missing when it does not exist.
	Health app.HealthStatusCode
	// HealthMessage says why, from package health.
	HealthMessage string
	// Message summarises the difference: which paths differ ("differs at
	// spec.replicas"), that it is missing, or that it is no longer desired.
	// It never holds values.
	Message string
	// RequiresPruning: tracked by the app and no longer desired.
	RequiresPruning bool
	// CountsAs is what it counts as in the app's sync status when that is
	// not Sync (app.ResourceStatus.CountsAs).
	CountsAs app.SyncStatusCode
	// Wave is the desired object's sync wave; 0 for one no longer desired.
	Wave int
}

// Compare predicts, for every desired object, what a sync would make of the
// live object (a server-side dry run of the same write, so defaults,
// admission and other managers' fields are all accounted for), and compares
// that with the live object with package diff: normalised, less what the
// app's ignoreDifferences ignore. Equal is Synced; different or missing is
// OutOfSync. Tracked objects of the app that are no longer desired come
// after, OutOfSync: a sync with prune deletes them. One whose compare
// options say IgnoreExtraneous still shows OutOfSync but counts as Synced
// for the app, whatever its Prune sync option (Argo CD's CompareAppState).
//
// Live objects come from the live cache when it is on (EnableLiveCache),
// and a result is reused while neither the desired object, the live one's
// resourceVersion nor the rules changed, so a compare that finds nothing
// new sends no request at all.
//
// States come in apply order. An object that cannot be compared has Sync
// Unknown and a Message; Compare then also returns an *ObjectErrors with
// every state it could compute.
func (c *Cluster) Compare(ctx context.Context, req CompareRequest) ([]ResourceState, error) {
	if err := validAppName(req.App); err != nil {
		return nil, err
	}
	tasks := c.prepare(req.App, req.Namespace, req.Options, req.Ignore, req.Objects)
	ordered := applyOrder(tasks)
	states := make([]ResourceState, len(ordered))
	empty := c.emptyNamespaces(true)
	runLimited(c.opts.Concurrency, len(ordered), func(i int) {
		t := ordered[i]
		switch {
		case t.err != nil:
		case t.mapping == nil && !c.mapTask(t):
			// Its CRD is in the desired state but not served: a sync makes both.
			t.err = nil
			states[i] = ResourceState{Key: t.key, Sync: app.SyncStatusOutOfSync, Health: app.HealthMissing,
				Message: "missing (its CustomResourceDefinition is not served yet)"}
		case prohibited(req, t) != "":
			states[i] = prohibitedState(t.key, prohibited(req, t))
		default:
			states[i] = c.compareOne(ctx, t, req.Ignore, empty)
		}
	})

	for i, t := range ordered {
		states[i].Wave, _ = syncplan.WaveOf(t.obj) // a bad wave is the plan's error
	}
	var errs []*ObjectError
	want := map[app.ResourceKey]bool{}
	for _, t := range tasks {
		want[identity(t.key)] = true
	}
	for i, t := range ordered {
		if t.err == nil {
			continue
		}
		errs = append(errs, t.err)
		if states[i].Key.Kind == "" { // never sent: keep what compareOne learnt otherwise
			states[i] = ResourceState{Key: t.key, Health: app.HealthUnknown}
		}
		states[i].Sync, states[i].Message = app.SyncStatusUnknown, t.err.message()
	}
	extra, lerrs := c.extraneous(ctx, req, want)
	return append(states, extra...), objectErrors(append(errs, lerrs...))
}

// extraneous returns the states of the app's tracked objects that are not
// desired, in prune order reversed (apply order).
func (c *Cluster) extraneous(ctx context.Context, req CompareRequest, want map[app.ResourceKey]bool) ([]ResourceState, []*ObjectError) {
	live, errs := c.listTracked(ctx, req.App, kindsOf(req.Objects, req.Inventory))
	var stale []*unstructured.Unstructured
	for _, obj := range live {
		if !want[identity(KeyOf(obj))] && !syncplan.IsHook(obj) {
			stale = append(stale, obj)
		}
	}
	sort.SliceStable(stale, func(i, j int) bool { return keyString(KeyOf(stale[i])) < keyString(KeyOf(stale[j])) })
	var out []ResourceState
	for _, obj := range stale {
		code, msg := c.opts.Health.Get(obj)
		if why := prohibitedLive(req, obj); why != "" {
			st := prohibitedState(KeyOf(obj), why)
			st.RequiresPruning = true
			out = append(out, st)
			continue
		}
		opts, _ := req.Options.WithAnnotation(obj.GetAnnotations()[app.AnnotationSyncOptions])
		st := extraneousState(KeyOf(obj), opts, ignoreExtraneous(obj))
		st.Health, st.HealthMessage = code, msg
		out = append(out, st)
	}
	return out, errs
}

// applyOrder returns the tasks that Compare reports (all but hooks): those
// that can be planned in plan order, then the failed ones.
func applyOrder(tasks []*task) []*task {
	planned, p := plan(tasks)
	var out []*task
	for _, w := range p.Waves {
		for _, step := range w.Steps {
			for _, i := range step {
				out = append(out, planned[i])
			}
		}
	}
	for _, t := range tasks {
		if t.err != nil && !t.hook {
			out = append(out, t)
		}
	}
	return out
}

// compareOne compares t's object with the live one, or sets t.err.
func (c *Cluster) compareOne(ctx context.Context, t *task, rules *diff.Rules, empty *emptyNamespaces) ResourceState {
	live, err := c.liveGetIn(ctx, t.mapping, t.key, empty)
	if err != nil {
		t.err = newObjectError(t.key, "get", err)
		return ResourceState{Key: t.key, Sync: app.SyncStatusUnknown, Health: app.HealthUnknown}
	}
	if live == nil {
		return ResourceState{Key: t.key, Sync: app.SyncStatusOutOfSync, Health: app.HealthMissing, Message: "missing"}
	}
	st, oerr := c.compareLive(ctx, t, live, rules)
	if oerr != nil {
		t.err = oerr
	}
	return st
}

// compareLive compares t's object with live, reusing the last result when
// nothing it depends on changed.
func (c *Cluster) compareLive(ctx context.Context, t *task, live *unstructured.Unstructured, rules *diff.Rules) (ResourceState, *ObjectError) {
	st := ResourceState{Key: t.key, Sync: app.SyncStatusUnknown}
	st.Health, st.HealthMessage = c.opts.Health.Get(live)
	ck := cacheKey{app: t.app, key: identity(t.key)}
	cv := cacheVersion{desired: t.digest(), uid: string(live.GetUID()), rules: rules.Digest()}
	if r, ok := c.results.get(ck, cv, live, c.opts.CompareCacheTTL); ok {
		st.Sync, st.Message = r.sync, r.message
		return st, nil
	}
	predicted, err := c.write(ctx, t, live, true)
	if err != nil {
		oerr := newObjectError(t.key, "dry-run apply", err)
		switch {
		case IsImmutable(err):
			st.Sync = app.SyncStatusOutOfSync
			st.Message = "differs in a field that cannot change in place (Force=true deletes and re-creates): " + oerr.Err.Error()
			return st, nil
		case IsInvalid(err):
			// Git wants what the API server refuses: the live object is not
			// what Git says, so it is OutOfSync (as in Argo CD), and a sync
			// is tried and fails with this reason.
			st.Sync, st.Message = app.SyncStatusOutOfSync, "the API server refuses the desired object: "+oerr.Err.Error()
			return st, nil
		}
		return st, oerr
	}
	res := diff.Compare(live, predicted, rules)
	if res.Equal() {
		st.Sync = app.SyncStatusSynced
	} else {
		st.Sync, st.Message = app.SyncStatusOutOfSync, "differs at "+diff.Summarize(res.Paths(c.opts.DiffDepth))
		if owner := trackedBy(live); owner != "" && owner != t.app {
			st.Message = joinMessage("tracked by Ferry application "+owner, st.Message)
		} else if owner == "" && diff.Compare(untracked(live), untracked(predicted), rules).Equal() {
			st.Message = MessageUntracked
		}
	}
	c.results.put(ck, cv, live, cachedResult{sync: st.Sync, message: st.Message})
	return st, nil
}

// ignoreExtraneous tells whether the live obj's compare options say
// IgnoreExtraneous. Its other options were checked when it was desired.
func ignoreExtraneous(obj *unstructured.Unstructured) bool {
	opts, _ := app.ParseCompareOptions(obj.GetAnnotations()[app.AnnotationCompareOptions])
	return opts.IgnoreExtraneous
}
