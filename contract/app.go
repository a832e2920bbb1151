package contract

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
)

// The public Temporal contract of an Application (see DESIGN.md).
const (
	// ApplicationWorkflow is the workflow type of every Application.
	ApplicationWorkflow = "Application"
	// TaskQueue serves the workflows and the Git and render activities.
	TaskQueue = "ferry"
	// OnboardTaskQueue is where Ferry starts a new app's workflow (ferry
	// app apply, an Application object, an ApplicationSet): its first run
	// takes its first sync there, then continues as new on TaskQueue. A
	// control worker serves both, each with its own pollers and slots, so
	// that the workflow tasks of a mass onboarding do not queue ahead of
	// those of the apps already running (a push, a user's sync). A run
	// started on TaskQueue (the temporal CLI) stays there.
	OnboardTaskQueue = "ferry-onboard"

	// QueryStatus answers the app's View: the Application with its status,
	// as Argo CD shows it; a deleted app's answers that it is not found.
	QueryStatus = "status"
	// QueryTarget answers the app's Target: the commit and digest of the
	// manifests it rendered last, which whoever holds a handover key can
	// have handed over (HandOverWorkflow), as ferry-server does. An app
	// that has rendered nothing yet answers an error saying so.
	QueryTarget = "target"
	// SignalRefresh makes the app compare now (RefreshRequest): a user's
	// refresh, a webhook's push, a region's drift.
	SignalRefresh = "refresh"
	// UpdateSync starts a sync operation (SyncRequest) and answers once it
	// has begun, with its ID.
	UpdateSync = "sync"
	// UpdateSpec replaces the app's spec (an Application and a SpecRequest),
	// as ferry app apply does, and answers the app's View.
	UpdateSpec = "spec"
	// UpdateDelete deletes the app (DeleteRequest), its resources first
	// when it cascades, and answers once it is gone (DeleteOutcome).
	UpdateDelete = "delete"
)

// DeleteOutcome is the result of the delete update: empty once the app is
// deleted; Waiting says what its deletion waits for (ferry app confirm).
type DeleteOutcome struct {
	Waiting string `json:"waiting,omitempty"`
}

// WorkflowID is the ID of the Application workflow of the app called name.
func WorkflowID(name string) string { return "app/" + name }

// RegionQueue is the task queue served by the worker pool of one region.
func RegionQueue(region string) string { return "ferry-region-" + region }

// UrgentRegionQueue is the second task queue of a region's worker pool,
// with slots of its own, for what someone waits for (a user's sync, a push,
// a drift to heal): it is not queued behind the region's routine work.
func UrgentRegionQueue(region string) string { return "ferry-urgent-region-" + region }

// RefreshRequest is the payload of the refresh signal.
type RefreshRequest struct {
	// Hard re-renders the manifests even when the revision has not moved.
	Hard bool `json:"hard"`
	// Push is set by the webhook: the app refreshes only when the push
	// moved the revision it tracks.
	Push *Push `json:"push,omitempty"`
	// Drift is set by a region worker that saw someone else change the
	// app's resources: the app compares now (and selfHeal syncs) instead of
	// at its next poll.
	Drift *Drift `json:"drift,omitempty"`
}

// Push is a Git push as a webhook reports it.
type Push struct {
	// Repos are the app's repo URLs, as its sources write them, that name
	// the pushed repository; empty from a worker older than the field (the
	// push was to spec.source's repository, or a multi-source app's first
	// Git repository).
	Repos []string `json:"repos,omitempty"`
	// Ref is the full ref that moved: refs/heads/main, refs/tags/v1.2.0.
	Ref string `json:"ref"`
	// Before and After are the SHAs of the ref before and after the push.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// DefaultBranch is true when Ref is the repo's default branch (HEAD).
	DefaultBranch bool `json:"defaultBranch,omitempty"`
	// Paths are the files the push touched, when the provider lists them;
	// empty means unknown (every path may have changed).
	Paths []string `json:"paths,omitempty"`
}

// SyncRequest is the payload of the sync update.
type SyncRequest struct {
	// Revision to sync instead of the app's targetRevision (branch, tag or SHA).
	Revision string `json:"revision,omitempty"`
	// Prune deletes tracked resources that are no longer in Git.
	Prune bool `json:"prune,omitempty"`
	// DryRun applies with the API server's dry-run: nothing changes.
	DryRun bool `json:"dryRun,omitempty"`
	// RollbackID syncs the revision of this history entry (IDs start at 0).
	RollbackID *int64 `json:"rollbackID,omitempty"`
	// Resources and Labels make a selective sync, as argocd app sync
	// --resource and --label: only what they name is applied (and
	// pruned); hooks do not run and no history entry is written, as in
	// Argo CD.
	Resources []app.SyncResource `json:"resources,omitempty"`
	Labels    []string           `json:"labels,omitempty"`
	// Force applies with Force=true (argocd app sync --force).
	Force bool `json:"force,omitempty"`
	// ApplyOutOfSyncOnly applies only what is OutOfSync (--apply-out-of-sync-only).
	ApplyOutOfSyncOnly bool `json:"applyOutOfSyncOnly,omitempty"`
	// Retry is the operation's retry policy in place of
	// spec.syncPolicy.retry (--retry-limit, --retry-backoff-*).
	Retry *app.RetryPolicy `json:"retry,omitempty"`
	// Info are name=value pairs kept on the operation, as argocd app sync
	// --info: its status.operationState.operation.info.
	Info []app.Info `json:"info,omitempty"`
	// InitiatedBy is who asks for the sync, kept on the operation as Argo
	// CD's status.operationState.operation.initiatedBy: the user
	// ferry-server authenticated, or the client identity of a direct call
	// (ferry app sync sends ferry-cli:USER@HOST). The workflow cannot learn
	// the caller of an update itself, so a request without it records
	// nobody.
	InitiatedBy *app.InitiatedBy `json:"initiatedBy,omitempty"`
	// Local syncs a tree of uncommitted manifests instead of a revision of
	// Git, as argocd app sync --local: the tree the CLI put in the
	// workers' manifest cache, named by its digest (never the manifests
	// themselves), rendered with the app's source options. Refused for an
	// app with automated sync (unless DryRun), a multi-source app, and
	// with Revision or RollbackID.
	Local *LocalSource `json:"local,omitempty"`
	// unknown are the fields of the request's JSON that none of the above
	// takes (UnmarshalJSON); the validator refuses them.
	unknown []string
}

// LocalSource names a local tree (ferry app sync --local DIR) in the
// workers' manifest cache.
type LocalSource struct {
	// Digest is "sha256:" and the hex SHA-256 of the tree's archive
	// (internal/localtree), the key it was put under.
	Digest string `json:"digest"`
	// Path is the directory of the app's manifests inside the tree, in
	// place of spec.source.path: "." for its root.
	Path string `json:"path"`
}

// Validate refuses a digest that is not a SHA-256 and a path that is not
// a clean relative one inside the tree.
func (l LocalSource) Validate() error {
	var errs []error
	hex, ok := strings.CutPrefix(l.Digest, "sha256:")
	if !ok || len(hex) != 64 || strings.Trim(hex, "0123456789abcdef") != "" {
		errs = append(errs, fmt.Errorf("local.digest %q: want sha256: and 64 lowercase hex digits", l.Digest))
	}
	if p := l.Path; p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		errs = append(errs, fmt.Errorf("local.path %q: want a clean relative path inside the tree (. for its root)", p))
	}
	return errors.Join(errs...)
}

// DeleteRequest is the payload of the delete update.
type DeleteRequest struct {
	// Cascade deletes the app's resources in every region first, and the
	// child apps of an app of apps (each as its own finalizers say). When
	// it is left out, a Propagation or the app's Argo CD resources
	// finalizer asks for it, as deleting an Argo CD Application object
	// does; an explicit false keeps them, as argocd app delete
	// --cascade=false does.
	Cascade *bool `json:"cascade,omitempty"`
	// Propagation is the deletion propagation policy of a cascading delete:
	// foreground, background or orphan; empty: the one the app's resources
	// finalizer names, else foreground.
	Propagation string `json:"propagationPolicy,omitempty"`
	// Parent is the app of apps pruning the app; empty: a user.
	Parent string `json:"parent,omitempty"`
	// AppSet is the ApplicationSet deleting an app it generated.
	AppSet string `json:"appSet,omitempty"`
	// Object is the Application object ("namespace/name") whose deletion
	// deletes the app: only the app it owns.
	Object string `json:"object,omitempty"`
}

// View is what the status query answers: the Application with its status,
// as Argo CD shows it.
type View struct {
	app.Application
	Status app.Status `json:"status"`
	// Owner is whom the app belongs to; nil when it was never recorded.
	Owner *Owner `json:"ferryOwner,omitempty"`
}

// AppNotFoundError: no app of that name runs. It never existed, or it was
// deleted: once its delete finished, its workflow closes and its status
// query answers this too, as argocd app get answers NotFound
// (applications.argoproj.io "NAME" not found) for a deleted Application.
type AppNotFoundError struct{ Name string }

func (e *AppNotFoundError) Error() string {
	return fmt.Sprintf("app %q not found: create it with ferry app apply -f FILE, or see ferry app list", e.Name)
}

// DefaultMaxReconciles bounds the reconciles of one run before it continues
// as new, so that a history stays far below Temporal's limits.
const DefaultMaxReconciles = 200

// Drift is what a region worker's live cache saw: resources of the app
// changed by someone else (kubectl edit, scale, delete). It rides on the
// refresh signal, so its handling is a refresh's: compare now, and with
// selfHeal sync back. It names resources and field managers only.
type Drift struct {
	Region string `json:"region"`
	// Resources are the changed resources, at most a few dozen.
	Resources []app.ResourceKey `json:"resources,omitempty"`
	// More counts the changed resources left out of Resources.
	More int `json:"more,omitempty"`
	// By names who changed them: field managers, or "deleted".
	By []string `json:"by,omitempty"`
}

// The defaults of Config.FullCompareEvery and FullCompareInterval, and the
// worker's --repo-poll-interval.
const (
	DefaultFullCompareEvery    = 10
	DefaultFullCompareInterval = 30 * time.Minute
	DefaultRepoPollInterval    = 3 * time.Minute
)

// ErrDeleting refuses an update of an app whose delete is under way.
var ErrDeleting = errors.New("the app is being deleted: wait for the delete to finish")

// By is how the parent applies its child name: as its owner, which created
// it before when it is among the previous children.
func (in ChildrenInput) By(name string) SpecRequest {
	return SpecRequest{Parent: in.Parent, Created: slices.Contains(in.Previous, name)}
}

// UpdateConfirm confirms what an app waits for: the prunes of its running
// operation that objects marked Prune=confirm hold back, and the deletes of
// its cascading delete that objects marked Delete=confirm hold back. It is
// Argo CD's argocd.argoproj.io/deletion-approved annotation, given after
// the operation (or the delete) began.
const UpdateConfirm = "confirm"

// ConfirmRequest is the payload of the confirm update.
type ConfirmRequest struct{}

// ConfirmResult says what the confirm update confirmed.
type ConfirmResult struct {
	// Operation is the ID of the running operation whose prunes may go on.
	Operation string `json:"operation,omitempty"`
	// Deletion: the app's deletion may delete what Delete=confirm held back.
	Deletion bool `json:"deletion,omitempty"`
}

// UpdateTerminateOp stops the app's running operation, as argocd app
// terminate-op does: the operation turns Terminating, the region syncs it
// runs are cancelled (a region stops before its next task: the engine
// checks between waves and in its waits), no retry follows, and the
// operation ends Failed with "Operation terminated" and the results of
// what was done. The app goes on reconciling. It answers with the ended
// operation.
const UpdateTerminateOp = "terminate-op"

// TerminateOpRequest is the payload of the terminate-op update.
type TerminateOpRequest struct{}

// ActivityDeleteChildren deletes the child apps of an app of apps (its
// cascading delete), on the control queue.
const ActivityDeleteChildren = "DeleteChildren"

// DeleteChildrenResult says what became of each child app.
type DeleteChildrenResult struct {
	// Deleted are the children deleted (their finalizers decided about
	// their resources).
	Deleted []string `json:"deleted,omitempty"`
	// Refused are the children another owner took over: left alone.
	Refused []string `json:"refused,omitempty"`
	// Kept are the children whose delete failed.
	Kept []string `json:"kept,omitempty"`
}

// cascades tells whether the delete removes the app's resources: as the
// request says; left out, when it names a propagation policy or the app
// carries Argo CD's resources finalizer, as deleting an Argo CD
// Application object does. A delete by an app of apps or an
// ApplicationSet leaves it out, so the app's own finalizer decides.
func (r DeleteRequest) Cascades(a *app.Application) bool {
	if r.Cascade != nil {
		return *r.Cascade
	}
	return r.Propagation != "" || a.CascadeDelete()
}

// propagation is the deletion propagation policy of a cascading delete:
// the request's, else the one the app's resources finalizer names, else
// foreground, as argocd app delete's default.
func (r DeleteRequest) PropagationPolicy(a *app.Application) string {
	return cmp.Or(r.Propagation, a.DeletePropagation(), app.PropagationForeground)
}

// validate refuses an unknown propagation policy, and one given with a
// delete that keeps the resources.
func (r DeleteRequest) Validate(name string) error {
	switch r.Propagation {
	case "", app.PropagationForeground, app.PropagationBackground, app.PropagationOrphan:
	default:
		return fmt.Errorf("app %q: delete propagation policy %q is unknown: want %s, %s or %s", name, r.Propagation,
			app.PropagationForeground, app.PropagationBackground, app.PropagationOrphan)
	}
	if r.Propagation != "" && r.Cascade != nil && !*r.Cascade {
		return fmt.Errorf("app %q: propagation policy %q is for a cascading delete, and cascade is false: leave out one of them", name, r.Propagation)
	}
	return nil
}

// UnmarshalJSON reads a sync request as Temporal's converter would, and
// remembers the fields it does not know, so that the validator can refuse
// them by name (a request naming another repository, say) instead of the
// converter dropping them without a word. It never fails on them: an update
// accepted once must decode the same when its history is replayed.
func (r *SyncRequest) UnmarshalJSON(data []byte) error {
	type plain SyncRequest
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*r = SyncRequest(p)
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) == nil {
		known := SyncRequestFields()
		for k := range fields {
			if !known[k] {
				r.unknown = append(r.unknown, k)
			}
		}
		sort.Strings(r.unknown)
	}
	return nil
}

// syncRequestFields are the JSON names of SyncRequest's fields.
func SyncRequestFields() map[string]bool {
	known := map[string]bool{}
	t := reflect.TypeOf(SyncRequest{})
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			known[name] = true
		}
	}
	return known
}

// UnknownFields are the fields of the request's JSON that SyncRequest does
// not have, sorted: the sync update's validator refuses them.
func (r SyncRequest) UnknownFields() []string { return r.unknown }
