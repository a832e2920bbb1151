package contract

import (
	"github.com/ferry-gitops/ferry/internal/app"
)

// Sync hooks: activities on the region queues, and the workflow that runs
// an operation's PostSync hooks after it.
const (
	// ActivityRunHooks runs one phase's hooks in a region and waits for
	// them (RunHooksInput, RunHooksResult). A hook that failed or timed
	// out ends it with the non-retryable ErrHookFailed, whose details are
	// the RunHooksResult so far.
	ActivityRunHooks = "RunHooks"
	// ActivityDeleteHooks deletes the hook objects whose delete policy
	// asked for it, once their results are in the history.
	ActivityDeleteHooks = "DeleteHooks"
	// ActivitySyncWithHooks is the Sync activity of an app with Sync-phase
	// hooks: each hook runs once the waves up to its own are applied and
	// healthy. Input and result are the Sync activity's.
	ActivitySyncWithHooks = "SyncWithHooks"

	// ErrHookFailed: a hook failed, timed out, or cannot be run as written.
	ErrHookFailed = "HookFailed"

	// PostSyncWorkflow is the workflow type that runs an operation's
	// PostSync hooks in every region, a child of the app's workflow that
	// outlives it (parent-close policy ABANDON), on TaskQueue.
	PostSyncWorkflow = "PostSyncHooks"
	// SignalPostSyncResult carries a PostSyncResult back to the app.
	SignalPostSyncResult = "postsync-result"
)

// Hook phases (app.HookType), as the payloads carry them: plain strings.
const (
	HookPreSync    = string(app.HookTypePreSync)
	HookSync       = string(app.HookTypeSync)
	HookPostSync   = string(app.HookTypePostSync)
	HookSyncFail   = string(app.HookTypeSyncFail)
	HookPostDelete = string(app.HookTypePostDelete)
)

// PostSyncWorkflowID is the ID of the PostSync workflow of one operation of
// an app: app/<name>/postsync/<operation id>.
func PostSyncWorkflowID(name, operationID string) string {
	return WorkflowID(name) + "/postsync/" + operationID
}

// RunHooksInput names a phase's hooks in one region. The activity loads the
// manifests itself by the target's digest.
type RunHooksInput struct {
	Target    Target `json:"target"`
	Region    string `json:"region"`
	Namespace string `json:"namespace,omitempty"`
	// OperationID identifies this run of the phase: unique for the app
	// across continue-as-new and a delete and re-create. Hook objects are
	// named and marked by it, so a retried activity finds its own.
	OperationID string `json:"operationID"`
	Phase       string `json:"phase"`
	// SyncOptions: CreateNamespace=true creates the destination namespace
	// before the first hook.
	SyncOptions []string `json:"syncOptions,omitempty"`
	// Project and OnboardPlace: as in SyncInput.
	Project      string `json:"project,omitempty"`
	OnboardPlace string `json:"onboardPlace,omitempty"`
}

// HookResult is how one hook ended in one region.
type HookResult struct {
	app.ResourceKey
	Region string `json:"region"`
	Phase  string `json:"phase"`
	Wave   int    `json:"wave,omitempty"`
	// Status is Succeeded or Failed.
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	// Delete: the hook's delete policy wants its object gone now.
	Delete bool `json:"delete,omitempty"`
}

type RunHooksResult struct {
	Hooks []HookResult `json:"hooks,omitempty"`
}

// DeleteHooksInput names hook objects of one run to delete.
type DeleteHooksInput struct {
	App         string            `json:"app"`
	Region      string            `json:"region"`
	OperationID string            `json:"operationID"`
	Phase       string            `json:"phase"`
	Hooks       []app.ResourceKey `json:"hooks"`
}

// PostSyncInput is the input of the PostSync workflow.
type PostSyncInput struct {
	// Parent is the app's workflow ID, which hears the outcome.
	Parent string `json:"parent"`
	// Operation is the app's operation (OperationState.ID) the hooks follow.
	Operation string `json:"operation"`
	// OperationID: as in RunHooksInput.
	OperationID  string       `json:"operationID"`
	Target       Target       `json:"target"`
	Destinations []app.Target `json:"destinations"`
	SyncOptions  []string     `json:"syncOptions,omitempty"`
	// SyncFail runs the SyncFail hooks when a PostSync hook fails, as Argo
	// CD does. A run started without it (before Ferry did so) replays as
	// it ran.
	SyncFail bool `json:"syncFail,omitempty"`
}

// PostSyncResult is the outcome of the PostSync workflow, signalled to the
// app and returned.
type PostSyncResult struct {
	WorkflowID string `json:"workflowID"`
	Operation  string `json:"operation"`
	// Phase is Succeeded or Failed.
	Phase   app.OperationPhase   `json:"phase"`
	Message string               `json:"message,omitempty"`
	Results []app.ResourceResult `json:"results,omitempty"`
}
