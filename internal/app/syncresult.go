package app

import (
	"slices"
	"strings"
)

// SyncResult is Argo CD's status.operationState.syncResult: the revision
// an operation synced and what it did to every resource, hooks included.
// Ferry keeps the list once, in OperationState.Results (the field it
// wrote first, still read by scripts); views add this one from it.
type SyncResult struct {
	Revision  string               `json:"revision"`
	Resources []SyncResourceResult `json:"resources"`
}

// SyncResourceResult is one entry of syncResult.resources: Ferry's result
// (key, region, action, message, hook type and phase) with Argo CD's
// result code and sync phase.
type SyncResourceResult struct {
	ResourceResult
	// Status is Argo CD's result code: Synced, SyncFailed, Pruned or
	// PruneSkipped.
	Status string `json:"status"`
	// SyncPhase is the phase the resource was synced in: a hook's own
	// phase, Sync for every other resource.
	SyncPhase string `json:"syncPhase"`
}

// Argo CD's result codes of syncResult.resources[].status.
const (
	ResultSynced       = "Synced"
	ResultSyncFailed   = "SyncFailed"
	ResultPruned       = "Pruned"
	ResultPruneSkipped = "PruneSkipped"
)

// resultCode maps a result onto Argo CD's code: a failed action is
// SyncFailed; a hook is Synced, since it was created (its hookPhase says
// how it ran: a hook that could not be created fails the operation and has
// no result), as Argo CD's e2e tests expect of a failed PreSync hook; a
// resource kept although no longer desired (Prune=false) is PruneSkipped.
func resultCode(r ResourceResult) string {
	switch {
	case r.HookType != "":
		return ResultSynced
	case r.Action == ActionFailed:
		return ResultSyncFailed
	case r.Action == ActionPruned:
		return ResultPruned
	case r.Action == ActionSkipped && strings.HasPrefix(r.Message, "no longer desired"):
		// Prune=false keeps it. (An object ApplyOutOfSyncOnly found in
		// sync is not in the results at all, as in Argo CD.)
		return ResultPruneSkipped
	}
	return ResultSynced
}

// WithSyncResult returns a copy of the operation that carries syncResult,
// built from its results and its PostSync hooks' results; nil stays nil.
func (o *OperationState) WithSyncResult() *OperationState {
	if o == nil {
		return nil
	}
	out := *o
	results := o.Results
	if o.PostSync != nil && len(o.PostSync.Results) > 0 {
		// The PostSync hooks are part of the operation, as in Argo CD.
		results = append(slices.Clip(results), o.PostSync.Results...)
	}
	res := &SyncResult{Revision: o.Revision, Resources: make([]SyncResourceResult, len(results))}
	for i, r := range results {
		phase := "Sync"
		if r.HookType != "" {
			phase = r.HookType
		}
		res.Resources[i] = SyncResourceResult{ResourceResult: r, Status: resultCode(r), SyncPhase: phase}
	}
	out.SyncResult = res
	return &out
}
