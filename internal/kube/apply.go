package kube

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/syncplan"
)

// Actions a Change reports: app's vocabulary (app.ChangeAction).
const (
	ActionCreated    = app.ActionCreated
	ActionConfigured = app.ActionConfigured
	ActionUnchanged  = app.ActionUnchanged
	ActionPruned     = app.ActionPruned
	ActionSkipped    = app.ActionSkipped
	ActionFailed     = app.ActionFailed
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
	// not modified. Hooks (syncplan.IsHook) among them are left to the hook
	// runner: not applied, and not pruned either.
	Objects []*unstructured.Unstructured
	// Inventory: as contract.CompareInput's. Pruning looks for leftovers
	// among the kinds of Objects and of Inventory; without it, only the
	// kinds still in Objects are searched.
	Inventory []app.ResourceKey
	// Prune deletes the app's tracked objects that Objects no longer has,
	// except those whose sync options say Prune=false. Pruning is skipped
	// when any object failed, so a half-applied sync never also removes
	// things.
	Prune bool
	// PruneCheck, when set, is asked about the objects a prune would
	// delete before any of them is: an error stops the prune with none
	// deleted, and is the sync's error (the region worker refuses to prune
	// what the app's project does not allow).
	PruneCheck func(stale []*unstructured.Unstructured) error
	// PruneConfirmed lets the prune delete objects marked Prune=confirm.
	// Without it, a prune that would delete one deletes nothing and lists
	// them in ChangeSet.AwaitingPrune, as Argo CD waits for its approval.
	PruneConfirmed bool
	// DryRun sends every request as a server-side dry run: the API server
	// validates, defaults and admits, and nothing is stored. Nothing is
	// waited for.
	DryRun bool
	// CreateNamespace creates Namespace when it does not exist, as Argo CD's
	// CreateNamespace=true sync option (Options.CreateNamespace does the
	// same). That namespace is not tracked, so it is never pruned nor
	// deleted with the app.
	CreateNamespace bool
	// NamespaceMetadata are the labels and annotations of the namespace
	// CreateNamespace makes (managedNamespaceMetadata): it is then applied
	// at every sync, so that they follow the spec. Nil: created only.
	NamespaceMetadata *app.ManagedNamespaceMetadata
	// Options are the app's sync options (spec.syncPolicy.syncOptions);
	// each object's argocd.argoproj.io/sync-options annotation overrides
	// them for that object (see options.go for what each does).
	Options app.SyncOptions
	// Ignore are the app's ignoreDifferences, for ApplyOutOfSyncOnly's
	// comparisons and RespectIgnoreDifferences. Nil ignores nothing.
	Ignore *diff.Rules
	// WaveTimeout bounds the wait for one wave to become healthy before the
	// next starts; zero means Options.WaveTimeout.
	WaveTimeout time.Duration
	// WaitLast waits for the last wave to become healthy too, as for every
	// other (a rollout stage must be healthy before the next). Without it
	// the sync ends once the last wave is applied, as Argo CD's operation
	// does, and the app's status shows it Progressing meanwhile.
	WaitLast bool
	// SyncHooks runs the Sync-phase hooks between the waves; nil runs none.
	SyncHooks *SyncHooks
	// Progress, when set, hears how the sync moves on: a Temporal activity
	// heartbeats from it. It is called from Apply's goroutine.
	Progress func(Progress)
}

// SyncHooks are the Sync-phase hooks of a sync, which another package
// runs (internal/hooks): Apply calls Run for each of Waves once the
// objects of that wave are applied (a wave that holds only hooks
// included), and waits for the wave's objects after the hooks ended.
type SyncHooks struct {
	// Waves are the waves that hold Sync hooks.
	Waves []int
	// Run runs the hooks of one wave and waits for them. Its changes join
	// the change set (Change.Hook set); an error, a hook that failed
	// included, stops the sync there as a failed object does: no later
	// wave, no prune.
	Run func(ctx context.Context, wave int) ([]Change, error)
}

// Progress is where a sync is.
type Progress struct {
	// Wave is the sync-wave being applied, waited for or pruned.
	Wave int
	// Stage is "apply", StageWait, "prune" or "hooks".
	Stage string
	// Message says what is happening, with counts, never values.
	Message string
}

func (p Progress) String() string { return fmt.Sprintf("wave %d: %s: %s", p.Wave, p.Stage, p.Message) }

// Change is what Apply did, or would do in a dry run, to one object.
type Change struct {
	// Key names the object, with the namespace it was applied to.
	Key app.ResourceKey
	// Action is one of the Action constants.
	Action app.ChangeAction
	// Message says why, in a few words: which fields changed, or the error.
	// It never holds field values.
	Message string
	// Wave is the object's sync wave.
	Wave int
	// Hook is the phase of a hook's change (SyncHooks); empty for an
	// ordinary object.
	Hook string
}

// ChangeSet lists the Changes of one Apply: in apply order, then prunes.
type ChangeSet struct {
	Entries []Change
	// AwaitingPrune are the objects marked Prune=confirm that the prune
	// left, with every other stale object, until it is confirmed
	// (ApplyRequest.PruneConfirmed).
	AwaitingPrune []app.ResourceKey
}

func (cs *ChangeSet) add(ch Change) { cs.Entries = append(cs.Entries, ch) }

// Apply brings the cluster to req.Objects, wave by wave (syncplan): each
// wave's kinds in order, the objects of one kind in parallel, then the
// wave's Sync hooks (req.SyncHooks), and, before the next wave starts, a
// wait until every object of the wave is healthy. The last wave is not
// waited for unless req.WaitLast: the sync ends once it is applied, as
// Argo CD's does. Then it prunes, from the highest wave down; objects
// marked PruneLast go after the last wave is healthy.
//
// Objects are written with server-side apply under the field manager
// Options.FieldManager, with Force: Git is the source of truth, so Ferry
// takes over any field its manifests set, even one another manager owns.
// Fields the manifests leave out stay with their owners, which is what lets
// an HPA keep spec.replicas when the manifest does not set it. (Argo CD's
// server-side apply forces conflicts the same way.) Replace=true writes
// with a PUT instead, Force=true deletes and re-creates an object whose
// change the API server refuses as immutable.
//
// An object that fails does not stop the others of its wave, but no later
// wave starts and nothing is pruned. Objects refused before anything is
// sent (no name, an unknown kind, a bad annotation) stop the sync before
// its first write. Apply returns, with the full ChangeSet (whatever the
// outcome: every object applied, failed or pruned so far), an
// *ObjectErrors wrapping one *ObjectError per failure, or a *HealthError
// when a wave did not become healthy. IsInvalid(err) tells when retrying
// cannot help. An object whose tracking id names another Ferry application
// is taken over, or refused before the first write with
// FailOnSharedResource=true (shared.go); one without any tracking id is
// adopted.
func (c *Cluster) Apply(ctx context.Context, req ApplyRequest) (*ChangeSet, error) {
	if err := validAppName(req.App); err != nil {
		return nil, err
	}
	s := &syncRun{c: c, req: req, cs: &ChangeSet{}, pending: map[string]bool{}, empty: c.emptyNamespaces(false)}
	tasks := c.prepare(req.App, req.Namespace, req.Options, req.Ignore, req.Objects)
	s.tasks = tasks
	planned, p := plan(tasks)
	s.refuseShared(ctx, planned)
	for _, t := range tasks {
		s.fail(t)
	}
	if len(s.errs) > 0 {
		return s.cs, objectErrors(s.errs)
	}
	if req.CreateNamespace || req.Options.CreateNamespace {
		if s.createNamespace(ctx); len(s.errs) > 0 {
			return s.cs, objectErrors(s.errs)
		}
	}

	waves := mergeWaves(p.Waves, req.SyncHooks)
	for wi, w := range waves {
		var wave []*task
		if len(w.Steps) > 0 {
			s.progress(w.Number, "apply", fmt.Sprintf("%d objects", countObjects(w)))
		}
		for _, step := range w.Steps {
			group := make([]*task, len(step))
			for i, idx := range step {
				group[i] = planned[idx]
			}
			s.applyStep(ctx, w.Number, group)
			wave = append(wave, group...)
		}
		if len(s.errs) > 0 {
			return s.cs, objectErrors(s.errs)
		}
		if err := s.runHooks(ctx, w.Number); err != nil {
			return s.cs, err
		}
		last := wi == len(waves)-1
		if !req.DryRun && len(wave) > 0 && (!last || req.WaitLast || s.needsFinalWait(ctx)) {
			if err := s.waitHealthy(ctx, w.Number, wave); err != nil {
				return s.cs, err
			}
		}
	}
	if req.Prune {
		if err := s.prune(ctx); err != nil {
			return s.cs, err
		}
	}
	return s.cs, objectErrors(s.errs)
}

// syncRun is the state of one Apply.
type syncRun struct {
	c   *Cluster
	req ApplyRequest
	cs  *ChangeSet
	// errs are the failures so far.
	errs []*ObjectError
	// tasks are every desired object's (their keys are final once their
	// wave has run: see task.deferred).
	tasks []*task
	// pending holds namespaces that exist only as a dry run's prediction:
	// the objects in them cannot be dry-run, so they are reported created.
	pending map[string]bool
	// empty are the namespaces this sync created: what it applies there is
	// new, and not asked for first.
	empty *emptyNamespaces
	// stale are the objects to prune, listed once (needsFinalWait, prune).
	stale      []*unstructured.Unstructured
	staleKnown bool
}

// desired returns the identities of every desired object.
func (s *syncRun) desired() map[app.ResourceKey]bool {
	want := make(map[app.ResourceKey]bool, len(s.tasks))
	for _, t := range s.tasks {
		want[identity(t.key)] = true
	}
	return want
}

// fail records t's error, if it has one, as a failed Change.
func (s *syncRun) fail(t *task) {
	if t.err == nil {
		return
	}
	s.errs = append(s.errs, t.err)
	s.cs.add(Change{Key: t.key, Action: ActionFailed, Message: t.err.message()})
}

func (s *syncRun) progress(wave int, stage, msg string) {
	if s.req.Progress != nil {
		s.req.Progress(Progress{Wave: wave, Stage: stage, Message: msg})
	}
}

// applyStep applies one step's tasks in parallel and records the results;
// after CRDs it waits for them to be Established.
func (s *syncRun) applyStep(ctx context.Context, wave int, group []*task) {
	c := s.c
	runLimited(c.opts.Concurrency, len(group), func(i int) {
		t := group[i]
		if c.mapTask(t) {
			c.applyOne(ctx, t, s.req, s.pending, s.empty)
		}
	})
	var crds []string
	for _, t := range group {
		if t.err != nil {
			s.fail(t)
			continue
		}
		if t.inSync {
			continue
		}
		t.change.Wave = wave
		s.cs.add(t.change)
		switch gk := t.key; {
		case syncplan.IsNamespace(gk.Group, gk.Kind) && t.change.Action == ActionCreated:
			if s.req.DryRun {
				s.pending[t.key.Name] = true
			} else {
				s.empty.created(t.key.Name)
			}
		case syncplan.IsCRD(gk.Group, gk.Kind):
			crds = append(crds, t.key.Name)
		}
	}
	if len(crds) > 0 && !s.req.DryRun {
		c.waitEstablished(ctx, crds)
	}
}

// createNamespace creates the destination namespace for CreateNamespace,
// unless the desired state has it.
func (s *syncRun) createNamespace(ctx context.Context) {
	ns := s.req.Namespace
	if ns == "" || desiresNamespace(s.req.Objects, ns) {
		return
	}
	ensure := s.c.ensureNamespace
	if meta := s.req.NamespaceMetadata; meta != nil {
		ensure = func(ctx context.Context, name string, dryRun bool) (*Change, *ObjectError) {
			return s.c.applyNamespace(ctx, name, dryRun, meta)
		}
	}
	ch, err := ensure(ctx, ns, s.req.DryRun)
	switch {
	case err != nil:
		s.errs = append(s.errs, err)
		s.cs.add(Change{Key: err.Key, Action: ActionFailed, Message: err.message()})
	case ch != nil:
		s.cs.add(*ch)
		switch {
		case s.req.DryRun:
			s.pending[ns] = true
		case ch.Action == ActionCreated:
			s.empty.created(ns)
		}
	}
}

// mergeWaves adds to the plan's waves those that hold Sync hooks only,
// in ascending order.
func mergeWaves(waves []syncplan.Wave, hooks *SyncHooks) []syncplan.Wave {
	if hooks == nil {
		return waves
	}
	out := slices.Clone(waves)
	for _, n := range hooks.Waves {
		if !slices.ContainsFunc(out, func(w syncplan.Wave) bool { return w.Number == n }) {
			out = append(out, syncplan.Wave{Number: n})
		}
	}
	slices.SortStableFunc(out, func(a, b syncplan.Wave) int { return cmp.Compare(a.Number, b.Number) })
	return out
}

// runHooks runs the Sync hooks of wave, if it has any, and adds their
// outcome to the change set; a dry run runs none.
func (s *syncRun) runHooks(ctx context.Context, wave int) error {
	h := s.req.SyncHooks
	if h == nil || s.req.DryRun || !slices.Contains(h.Waves, wave) {
		return nil
	}
	s.progress(wave, "hooks", "running Sync hooks")
	changes, err := h.Run(ctx, wave)
	for _, ch := range changes {
		ch.Wave = wave
		s.cs.add(ch)
	}
	return err
}

func countObjects(w syncplan.Wave) int {
	n := 0
	for _, s := range w.Steps {
		n += len(s)
	}
	return n
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
