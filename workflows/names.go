package workflows

import (
	"github.com/ferry-gitops/ferry/internal/app"
)

// The public Temporal contract of an Application (see DESIGN.md).
const (
	// ApplicationWorkflow is the workflow type of every Application.
	ApplicationWorkflow = "Application"
	// TaskQueue serves the workflows and the Git and render activities.
	TaskQueue = "ferry"

	// QueryStatus answers the app's View: the Application with its status,
	// as Argo CD shows it; a deleted app's answers that it is not found.
	QueryStatus = "status"
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
	// unknown are the fields of the request's JSON that none of the above
	// takes (UnmarshalJSON); the validator refuses them.
	unknown []string
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
}

// View is what the status query answers: the Application with its status,
// as Argo CD shows it.
type View struct {
	app.Application
	Status app.Status `json:"status"`
	// Owner is whom the app belongs to; nil when it was never recorded.
	Owner *Owner `json:"ferryOwner,omitempty"`
}
