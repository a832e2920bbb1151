package app

import "time"

type SyncStatusCode string

const (
	SyncStatusSynced    SyncStatusCode = "Synced"
	SyncStatusOutOfSync SyncStatusCode = "OutOfSync"
	SyncStatusUnknown   SyncStatusCode = "Unknown"
)

type HealthStatusCode string

const (
	HealthHealthy     HealthStatusCode = "Healthy"
	HealthProgressing HealthStatusCode = "Progressing"
	HealthDegraded    HealthStatusCode = "Degraded"
	HealthSuspended   HealthStatusCode = "Suspended"
	HealthMissing     HealthStatusCode = "Missing"
	HealthUnknown     HealthStatusCode = "Unknown"
)

type OperationPhase string

const (
	OperationRunning   OperationPhase = "Running"
	OperationSucceeded OperationPhase = "Succeeded"
	OperationFailed    OperationPhase = "Failed"
	OperationError     OperationPhase = "Error"
	// OperationTerminating: ferry app terminate-op asked the operation to
	// stop; it ends Failed with "Operation terminated", as in Argo CD.
	OperationTerminating OperationPhase = "Terminating"
)

// Status is what the app reports, shaped like Argo CD's Application status.
type Status struct {
	Sync           SyncStatus               `json:"sync"`
	Rollout        *RolloutStatus           `json:"rollout,omitempty"`
	Health         HealthStatus             `json:"health"`
	Resources      []ResourceStatus         `json:"resources,omitempty"`
	OperationState *OperationState          `json:"operationState,omitempty"`
	Conditions     []Condition              `json:"conditions,omitempty"`
	History        []HistoryEntry           `json:"history,omitempty"`
	ReconciledAt   *time.Time               `json:"reconciledAt,omitempty"`
	Regions        map[string]RegionSummary `json:"regions,omitempty"`
	// SyncWindow is set while the project's sync windows hold back an
	// automated sync.
	SyncWindow *SyncWindowStatus `json:"syncWindow,omitempty"`
	// SourceType is how a one-source app was last rendered (Directory,
	// Kustomize, Helm, Plugin); SourceTypes a multi-source app's, one per
	// source in order, as Argo CD's.
	SourceType  string   `json:"sourceType,omitempty"`
	SourceTypes []string `json:"sourceTypes,omitempty"`
	// Summary: the images and external URLs of the last render.
	Summary *Summary `json:"summary,omitempty"`
}

type SyncStatus struct {
	Status   SyncStatusCode `json:"status"`
	Revision string         `json:"revision,omitempty"`
	// Revisions are a multi-source app's, one per source in spec.sources'
	// order (Revision is them joined by commas), as Argo CD's.
	Revisions []string `json:"revisions,omitempty"`
}

type HealthStatus struct {
	Status  HealthStatusCode `json:"status"`
	Message string           `json:"message,omitempty"`
}

// ResourceStatus is one resource of the app in one region. Its health is
// health.status and health.message in JSON, as Argo CD's (resource_json.go).
type ResourceStatus struct {
	ResourceKey
	Region string           `json:"region"`
	Status SyncStatusCode   `json:"status"`
	Health HealthStatusCode `json:"-"`
	// HealthMessage says why the resource has its health: `container "web":
	// CrashLoopBackOff`.
	HealthMessage string `json:"-"`
	// Message says how it compares: which paths differ, that it is missing.
	Message string `json:"message,omitempty"`
	// RequiresPruning: the app tracks it but no longer wants it (Argo
	// CD's requiresPruning).
	RequiresPruning bool `json:"requiresPruning,omitempty"`
	// CountsAs is what the resource counts as in the app's (and its
	// region's) sync status when that is not Status, as Argo CD's
	// controller rolls the status up: Synced for a resource to prune that
	// says IgnoreExtraneous (it shows OutOfSync), OutOfSync for a resource
	// of the app that its project does not permit (it shows Unknown).
	CountsAs SyncStatusCode `json:"countsAs,omitempty"`
	// SyncWave is the desired object's sync wave (Argo CD's syncWave).
	SyncWave int `json:"syncWave,omitempty"`
}

// AppSync is what r counts as in the app's sync status (CountsAs).
func (r ResourceStatus) AppSync() SyncStatusCode {
	if r.CountsAs != "" {
		return r.CountsAs
	}
	return r.Status
}

type OperationState struct {
	ID         string           `json:"id"`
	Revision   string           `json:"revision"`
	Phase      OperationPhase   `json:"phase"`
	Message    string           `json:"message,omitempty"`
	Results    []ResourceResult `json:"results,omitempty"`
	StartedAt  time.Time        `json:"startedAt"`
	FinishedAt *time.Time       `json:"finishedAt,omitempty"`
	RetryCount int64            `json:"retryCount,omitempty"`
	// Operation is what was asked of the operation, as Argo CD's
	// operationState.operation; nil when the request asked nothing to keep.
	Operation *Operation `json:"operation,omitempty"`
	// PostSync is the run of the operation's PostSync hooks, which goes on
	// after the operation (a workflow of its own).
	PostSync *HookRun `json:"postSync,omitempty"`
	// SyncResult is Argo CD's view of Results, in views only
	// (WithSyncResult): the state keeps the list once.
	SyncResult *SyncResult `json:"syncResult,omitempty"`
	// Local is the digest of the local tree the operation synced (ferry
	// app sync --local); Revision is then empty, as Argo CD records a
	// local sync.
	Local string `json:"ferryLocal,omitempty"`
}

// Operation is Argo CD's operationState.operation, as far as Ferry keeps
// it: the info of argocd app sync --info, and who asked.
type Operation struct {
	// Info are the name=value pairs the sync request recorded on the
	// operation (ferry app sync --info), in the order given.
	Info []Info `json:"info,omitempty"`
	// InitiatedBy is who asked for the operation; nil when the request
	// did not say (a sync update sent without it, by the temporal CLI or
	// an older client).
	InitiatedBy *InitiatedBy `json:"initiatedBy,omitempty"`
}

// InitiatedBy is Argo CD's operation.initiatedBy (OperationInitiator):
// who asked for an operation.
type InitiatedBy struct {
	// Username is the user who asked: the user ferry-server authenticated,
	// or the Temporal client identity of a direct call (ferry app sync
	// without a login sends ferry-cli:USER@HOST); for an automated
	// operation, the controller that started it, if not the app itself.
	Username string `json:"username,omitempty"`
	// Automated: no user asked; the app's automated sync policy (a sync
	// of a new revision, selfHeal) or an ApplicationSet's progressive
	// sync started the operation.
	Automated bool `json:"automated,omitempty"`
}

// String says who initiated the operation, as Argo CD's UI does: the
// username, or "automated sync policy" for an automated operation of the
// app's own.
func (b *InitiatedBy) String() string {
	switch {
	case b == nil:
		return ""
	case b.Automated && b.Username == "":
		return "automated sync policy"
	case b.Automated:
		return b.Username + " (automated)"
	}
	return b.Username
}

// HookRun is a run of hooks that outlives its operation: PostSync.
type HookRun struct {
	// WorkflowID is the workflow that runs the hooks.
	WorkflowID string `json:"workflowID,omitempty"`
	// Phase is Running, Succeeded or Failed.
	Phase      OperationPhase   `json:"phase"`
	Message    string           `json:"message,omitempty"`
	Results    []ResourceResult `json:"results,omitempty"`
	StartedAt  time.Time        `json:"startedAt"`
	FinishedAt *time.Time       `json:"finishedAt,omitempty"`
}

// ResourceResult is what one sync did to one resource in one region.
type ResourceResult struct {
	ResourceKey
	Region  string       `json:"region"`
	Action  ChangeAction `json:"action"` // created, configured, unchanged, pruned, skipped, failed
	Message string       `json:"message,omitempty"`
	// HookType is the phase of a hook (PreSync, Sync, PostSync, SyncFail,
	// PostDelete); empty for an ordinary resource.
	HookType string `json:"hookType,omitempty"`
	// HookPhase is how the hook ended: Succeeded or Failed.
	HookPhase string `json:"hookPhase,omitempty"`
}

type Condition struct {
	Type    string    `json:"type"`
	Message string    `json:"message"`
	At      time.Time `json:"lastTransitionTime"`
}

// HistoryEntry is one deployment; Status.AddHistory numbers them.
type HistoryEntry struct {
	ID         int64     `json:"id"`
	Revision   string    `json:"revision"`
	DeployedAt time.Time `json:"deployedAt"`
	Source     Source    `json:"source"`
	// Revisions and Sources are a multi-source app's, as Argo CD's
	// (Source is then empty).
	Revisions []string `json:"revisions,omitempty"`
	Sources   []Source `json:"sources,omitempty"`
	// Local is the digest of the local tree deployed (ferry app sync
	// --local): Revision is then empty, as Argo CD records a local sync,
	// and Source is the app's with the tree's path.
	Local string `json:"ferryLocal,omitempty"`
}

// RolloutStatus says where a staged rollout is.
type RolloutStatus struct {
	Revision string `json:"revision"`
	// Stage is the stage in progress or where the rollout stopped, from 1.
	Stage  int `json:"stage"`
	Stages int `json:"stages"`
	// Phase is Progressing, Soaking, Halted or Completed.
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
}

// Rollout phases.
const (
	RolloutProgressing = "Progressing"
	RolloutSoaking     = "Soaking"
	RolloutHalted      = "Halted"
	RolloutCompleted   = "Completed"
)

type RegionSummary struct {
	// Unreachable: no worker of the region answered in time, or its API
	// server could not be reached; Message says which.
	Unreachable bool             `json:"unreachable,omitempty"`
	Sync        SyncStatusCode   `json:"sync"`
	Health      HealthStatusCode `json:"health"`
	// Revision is the commit the region was last compared with.
	Revision string `json:"revision,omitempty"`
	// SyncedRevision is the commit the region runs: the last one a sync
	// applied there, or one it compared Synced with. During a halted
	// rollout, a later stage's Revision is the new commit and its
	// SyncedRevision the previous one.
	SyncedRevision string `json:"syncedRevision,omitempty"`
	Message        string `json:"message,omitempty"`
	Resources      int    `json:"resources"`
}
