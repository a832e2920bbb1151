package app

// The annotations Ferry reads from the objects of an app (and, for
// AnnotationCompareOptions and AnnotationManifestGeneratePaths, from the
// Application itself): Argo CD's, so that existing repositories work, and
// Helm's hook annotations, which map onto Argo CD's. This is the one place
// they are named.
const (
	// AnnotationHook makes an object a hook of the named phases
	// (HookPhase), comma separated.
	AnnotationHook = "argocd.argoproj.io/hook"
	// AnnotationHookDeletePolicy says when a hook's object is deleted:
	// BeforeHookCreation, HookSucceeded, HookFailed, comma separated.
	AnnotationHookDeletePolicy = "argocd.argoproj.io/hook-delete-policy"
	// AnnotationSyncWave is the object's sync wave (or a hook's weight
	// within its phase): an integer, 0 when absent.
	AnnotationSyncWave = "argocd.argoproj.io/sync-wave"
	// AnnotationSyncOptions carries a resource's sync options, comma
	// separated: "Prune=false,Replace=true" (SyncOptions).
	AnnotationSyncOptions = "argocd.argoproj.io/sync-options"
	// AnnotationCompareOptions carries Argo CD's compare options, comma
	// separated. On a resource: IgnoreExtraneous. On the Application
	// (metadata.annotations): ServerSideDiff and IncludeMutationWebhook.
	AnnotationCompareOptions = "argocd.argoproj.io/compare-options"
	// AnnotationManifestGeneratePaths, on the Application, lists,
	// semicolon separated, the paths whose changes affect the app's
	// manifests: relative to spec.source.path, or from the repository's
	// root when they start with "/".
	AnnotationManifestGeneratePaths = "argocd.argoproj.io/manifest-generate-paths"

	// AnnotationHelmHook is Helm's hook annotation, mapped onto Argo CD's
	// phases (HelmHookPhases); Argo CD's wins when an object has both.
	AnnotationHelmHook = "helm.sh/hook"
	// AnnotationHelmHookWeight orders Helm hooks as AnnotationSyncWave
	// does.
	AnnotationHelmHookWeight = "helm.sh/hook-weight"
	// AnnotationHelmHookDeletePolicy is Helm's delete policy:
	// before-hook-creation, hook-succeeded, hook-failed.
	AnnotationHelmHookDeletePolicy = "helm.sh/hook-delete-policy"
)

// AnnotationShadow, on an Application, marks an app ferry import brought
// over from Argo CD that runs in shadow: Ferry compares it and reports,
// but does not write, because Argo CD still manages it. Its value (JSON)
// keeps aside what the import took out of the spec: the automated sync
// policy and the finalizers of Argo CD's Application (internal/argoimport
// reads and writes it); ferry app takeover removes it. Argo CD reads no
// ferry.dev annotation.
const AnnotationShadow = "ferry.dev/shadow"

// InShadow reports whether the app runs in shadow (AnnotationShadow).
func (a *Application) InShadow() bool {
	_, ok := a.Metadata.Annotations[AnnotationShadow]
	return ok
}
