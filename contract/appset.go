package contract

import (
	"fmt"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
)

// The public Temporal contract of an ApplicationSet (see DESIGN.md): one
// long-running workflow per set owns the Application workflows its
// generators produce.
const (
	// AppSetWorkflow is the workflow type of every ApplicationSet.
	AppSetWorkflow = "ApplicationSet"
	// UpdateAppSetSpec replaces the set (an ApplicationSet as JSON).
	UpdateAppSetSpec = "spec"
	// UpdateAppSetDelete deletes the set and its apps.
	UpdateAppSetDelete = "delete"
	// The set answers QueryStatus with an AppSetView and takes
	// SignalRefresh (a RefreshRequest) as an app does.

	// ActivityGenerateAppSet runs the generators (control queue).
	ActivityGenerateAppSet = "GenerateAppSet"
	// ActivityReconcileAppSet creates, updates and deletes the set's apps.
	ActivityReconcileAppSet = "ReconcileAppSet"
	// ActivitySyncAppSetApps starts the syncs of a RollingSync step.
	ActivitySyncAppSetApps = "SyncAppSetApps"

	// memoAppSetRepos lists the repositories of the set's git generators,
	// so that the webhook finds the sets a push concerns.
	MemoAppSetRepos = "ferryRepos"
	// memoAppSetOwned lists the apps the set owns, so that an app listing
	// names each app's set without asking any workflow.
	MemoAppSetOwned = "ferryOwned"
)

// AppSetWorkflowID is the ID of the workflow of the set called name.
func AppSetWorkflowID(name string) string { return "appset/" + name }

// GenerateInput asks for one generation of a set.
type GenerateInput struct {
	Set appset.ApplicationSet `json:"set"`
	// Fresh lists the git generators' refs anew (a refresh); otherwise the
	// refs cache that every app of the repo shares may answer, MaxAge old.
	Fresh  bool          `json:"fresh,omitempty"`
	MaxAge time.Duration `json:"maxAge,omitempty"`
}

type GenerateResult struct {
	Apps []app.Application `json:"apps,omitempty"`
	// Invalid are the messages of generated apps that are not valid.
	Invalid []string `json:"invalid,omitempty"`
	// Revisions are the commits the git generators read, by repository.
	Revisions []RepoRevision `json:"revisions,omitempty"`
}

type RepoRevision struct {
	RepoURL  string `json:"repoURL"`
	Revision string `json:"revision"`
	SHA      string `json:"sha"`
}

// ReconcileInput is what the set's apps should be.
type ReconcileInput struct {
	Set  string            `json:"set"`
	Apps []app.Application `json:"apps,omitempty"`
	// Previous are the apps the set owns.
	Previous []string `json:"previous,omitempty"`
	// Policy is spec.syncPolicy.applicationsSync (create-only, ...).
	Policy string `json:"policy"`
	// NoDelete keeps the previous apps no longer generated (a policy
	// without deletes, or a generation with invalid apps).
	NoDelete bool `json:"noDelete,omitempty"`
	// Preserve keeps the resources of the apps the set deletes.
	Preserve bool `json:"preserve,omitempty"`
	// DeleteAll deletes every previous app (the set is being deleted), or
	// releases each when Policy deletes none (appset.PolicyDeletes).
	DeleteAll bool `json:"deleteAll,omitempty"`
	// Ignore is spec.ignoreApplicationDifferences: fields of the running
	// apps an update keeps.
	Ignore []appset.ApplicationMatchExpression `json:"ignore,omitempty"`
	// Preserved is spec.preservedFields: annotations and labels of the
	// running apps an update keeps.
	Preserved *appset.PreservedFields `json:"preserved,omitempty"`
}

// Actions of ReconcileResult.Apps, as a change set.
const (
	AppCreated   = "created"
	AppUpdated   = "updated"
	AppUnchanged = "unchanged"
	AppDeleted   = "deleted"
	AppKept      = "kept"
	// AppReleased: the set was deleted and its policy deletes no app; the
	// app stays, no longer the set's (a user's, as after ferry app apply
	// --force-adopt), as Argo CD drops the set's owner reference.
	AppReleased = "released"
	AppRefused  = "refused"
	AppFailed   = "failed"
)

type ReconcileResult struct {
	Apps []AppSetApp `json:"apps,omitempty"`
	// Owned are the apps the set owns now.
	Owned []string `json:"owned,omitempty"`
}

// AppSetApp is one generated app, as the set last saw it.
type AppSetApp struct {
	Name    string               `json:"name"`
	Action  string               `json:"action,omitempty"`
	Message string               `json:"message,omitempty"`
	Sync    app.SyncStatusCode   `json:"sync,omitempty"`
	Health  app.HealthStatusCode `json:"health,omitempty"`
	// What a RollingSync needs besides: the commit the app last compared
	// with, when, and its last operation.
	Revision     string             `json:"revision,omitempty"`
	ReconciledAt *time.Time         `json:"reconciledAt,omitempty"`
	OpStartedAt  *time.Time         `json:"opStartedAt,omitempty"`
	OpPhase      app.OperationPhase `json:"opPhase,omitempty"`
	OpMessage    string             `json:"opMessage,omitempty"`
}

// SyncAppSetAppsInput asks for the syncs of the apps a RollingSync step
// made Pending. Each is started once: not again when a sync began after
// the app became Pending (Since).
type SyncAppSetAppsInput struct {
	Set  string         `json:"set"`
	Apps []AppSetSyncOf `json:"apps"`
}

type AppSetSyncOf struct {
	Name  string    `json:"name"`
	Prune bool      `json:"prune,omitempty"`
	Since time.Time `json:"since"`
}

type SyncAppSetAppsResult struct {
	// Refused names the apps whose sync could not start, with why.
	Refused []AppSetApp `json:"refused,omitempty"`
}

// AppSetView is what the status query answers: the set with its status,
// as Argo CD shows it.
type AppSetView struct {
	appset.ApplicationSet
	Status AppSetStatus `json:"status"`
}

type AppSetStatus struct {
	Conditions []AppSetCondition `json:"conditions,omitempty"`
	// Resources are the set's apps with their sync and health.
	Resources []AppSetResource `json:"resources,omitempty"`
	// Revisions are the commits its git generators read last.
	Revisions []RepoRevision `json:"ferryRevisions,omitempty"`
	// ApplicationStatus is each app's progress in a RollingSync, as Argo
	// CD's.
	ApplicationStatus []appset.ApplicationStatus `json:"applicationStatus,omitempty"`
}

// Condition types of a set, as Argo CD names them.
const (
	AppSetErrorOccurred       = "ErrorOccurred"
	AppSetParametersGenerated = "ParametersGenerated"
	AppSetResourcesUpToDate   = "ResourcesUpToDate"
	AppSetRolloutProgressing  = "RolloutProgressing"
)

type AppSetCondition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Message            string    `json:"message,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

// AppSetResource is one app of the set, as Argo CD's status.resources.
type AppSetResource struct {
	Group     string             `json:"group"`
	Version   string             `json:"version"`
	Kind      string             `json:"kind"`
	Name      string             `json:"name"`
	Namespace string             `json:"namespace,omitempty"`
	Status    app.SyncStatusCode `json:"status,omitempty"`
	Health    *AppSetHealth      `json:"health,omitempty"`
	Message   string             `json:"message,omitempty"`
}

type AppSetHealth struct {
	Status app.HealthStatusCode `json:"status"`
}

// DeleteAppSetRequest is the payload of the set's delete update.
type DeleteAppSetRequest struct{}

// AppSetCarried is the ApplicationSet workflow's state that persists: a
// run hands it, as it is, to the next on continue-as-new.
type AppSetCarried struct {
	Owned  []string     `json:"owned,omitempty"`
	Status AppSetStatus `json:"status"`
	// Refresh: a refresh waits; set at the hand-over from the run's own.
	Refresh bool `json:"refresh,omitempty"`
}

// ErrInvalidAppSet: the generators or the template cannot run as given.
const ErrInvalidAppSet = "InvalidApplicationSet"

// AppSetNotFoundError: no set of that name runs.
type AppSetNotFoundError struct{ Name string }

func (e *AppSetNotFoundError) Error() string {
	return fmt.Sprintf("applicationset %q not found: create it with ferry appset apply -f FILE, or see ferry appset list", e.Name)
}

// AppSetSummary is a running set as a listing sees it.
type AppSetSummary struct {
	Name  string
	Repos []string
	// Owned are the apps the set owns, as it last published them.
	Owned []string
}
