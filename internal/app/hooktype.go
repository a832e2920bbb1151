package app

// HookType is when a hook runs, as the argocd.argoproj.io/hook annotation
// names it (Argo CD's HookType).
type HookType string

const (
	HookTypePreSync    HookType = "PreSync"
	HookTypeSync       HookType = "Sync"
	HookTypePostSync   HookType = "PostSync"
	HookTypeSyncFail   HookType = "SyncFail"
	HookTypePostDelete HookType = "PostDelete"
	// HookTypeSkip is not a phase: a hook marked Skip is never applied nor
	// run.
	HookTypeSkip HookType = "Skip"
)

// HookTypes are the phases a hook may name, in the order an operation
// meets them.
var HookTypes = []HookType{HookTypePreSync, HookTypeSync, HookTypePostSync, HookTypeSyncFail, HookTypePostDelete}

// HelmHookTypes maps Helm's hook names (AnnotationHelmHook) onto phases.
// Helm's other hooks (pre-delete, pre-rollback, post-rollback, test) have
// no phase here: such an object is a hook that never runs, as in Argo CD.
var HelmHookTypes = map[string]HookType{
	"pre-install":  HookTypePreSync,
	"pre-upgrade":  HookTypePreSync,
	"post-install": HookTypePostSync,
	"post-upgrade": HookTypePostSync,
	"post-delete":  HookTypePostDelete,
}
