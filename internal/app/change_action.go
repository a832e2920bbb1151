package app

// ChangeAction is what a sync did to one resource (ResourceResult.Action),
// as `kubectl apply` names it.
type ChangeAction string

const (
	ActionCreated    ChangeAction = "created"
	ActionConfigured ChangeAction = "configured"
	ActionUnchanged  ChangeAction = "unchanged"
	ActionPruned     ChangeAction = "pruned"
	// ActionSkipped: not applied, e.g. a prune awaiting confirmation.
	ActionSkipped ChangeAction = "skipped"
	ActionFailed  ChangeAction = "failed"
)
