package contract

import (
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"go.temporal.io/sdk/temporal"
)

// Activity names. Control activities run on TaskQueue, region activities on
// RegionQueue(region) or UrgentRegionQueue(region); the activities package
// registers them under these names.
const (
	ActivityResolveRevision = "ResolveRevision"
	ActivityRender          = "Render"
	ActivityCompare         = "Compare"
	ActivitySync            = "Sync"
	ActivityDeleteResources = "DeleteResources"
)

// Error types an activity marks non-retryable; the workflow reports them
// instead of retrying.
const (
	ErrInvalidManifests = "InvalidManifests"
	ErrInvalidSource    = "InvalidSource"
	ErrWrongRegion      = "WrongRegion"
	// ErrSyncFailed: the API server refused the manifests. Another attempt of
	// the same activity will not help, but the operation's retry policy
	// (syncPolicy.retry) may, once what was missing appears.
	ErrSyncFailed = "SyncFailed"
	// ErrUnreachable: the region's API server could not be reached.
	ErrUnreachable = "Unreachable"
	// ErrProjectDenied: the app's AppProject does not allow some object of
	// the sync (or its repository) in the region; nothing was applied.
	ErrProjectDenied = "ProjectDenied"
)

type ResolveInput struct {
	RepoURL        string `json:"repoURL"`
	TargetRevision string `json:"targetRevision"`
	// Chart names a chart of the Helm repository or OCI registry RepoURL
	// (spec.source.chart): TargetRevision is then a version or semver
	// constraint, and the result's SHA the chart version it resolves to.
	Chart string `json:"chart,omitempty"`
	// Fresh skips the refs cache shared by the apps of a repo: a refresh or a
	// sync asks Git itself; a timer poll may take a result a few seconds old.
	Fresh bool `json:"fresh,omitempty"`
	// MaxAge is how old a shared listing of the repo's refs may be: a timer
	// poll passes its interval, so a repo is listed at most once per
	// interval however many apps poll it.
	MaxAge time.Duration `json:"maxAge,omitempty"`
	// Regions asks who serves these regions' task queues too
	// (ResolveResult.Workers), so that one local activity answers both.
	Regions []string `json:"regions,omitempty"`
	// Requested is set when a sync request named TargetRevision instead of
	// the app's spec: the activity then admits a branch, a tag or a commit
	// in their history only, unless the app's project allows any revision.
	Requested *RequestedRevision `json:"requested,omitempty"`
}

// RequestedRevision names the app whose sync request named a revision, and
// its project.
type RequestedRevision struct {
	App     string `json:"app"`
	Project string `json:"project"`
}

type ResolveResult struct {
	// SHA is the commit, or for a chart source the chart version (what
	// status.sync.revision shows, as in Argo CD).
	SHA string `json:"sha"`
	// Workers names, per region of ResolveInput.Regions, the worker
	// processes polling its task queue (a digest of their identities; empty
	// when none is known): a change means a region worker started or went,
	// and its live cache knows nothing of the app.
	Workers map[string]string `json:"workers,omitempty"`
}

// Target names one rendered manifest set: where it comes from and its digest.
// Region workers load it from the manifest cache, or render it again from Git.
type Target struct {
	App    string     `json:"app"`
	Source app.Source `json:"source"`
	// SHA is the commit the manifests are rendered from.
	SHA    string `json:"sha"`
	Digest string `json:"digest"`
	// Revision is the commit the target stands for, when newer than SHA: a
	// push that touched none of the app's manifest-generate-paths.
	Revision string `json:"revision,omitempty"`
	// Namespace is the namespace Helm renders the release for: the first
	// destination's, the same in every region so that one digest holds.
	Namespace string `json:"namespace,omitempty"`
	// Sources are a multi-source app's sources at their revisions (Source
	// is then empty, and SHA their revisions joined by commas).
	Sources []SourceRevision `json:"sources,omitempty"`
	// Local is the digest of the local tree a local sync rendered (SHA is
	// then empty, and Source.Path the manifests' directory in the tree):
	// a worker without its set renders the tree again from the manifest
	// cache, never Git.
	Local string `json:"local,omitempty"`
}

// Commit is the commit the target stands for.
func (t Target) Commit() string {
	if t.Revision != "" {
		return t.Revision
	}
	return t.SHA
}

type RenderInput struct {
	App    string     `json:"app"`
	Source app.Source `json:"source"`
	SHA    string     `json:"sha"`
	// Sources: as Target.Sources, rendered together.
	Sources []SourceRevision `json:"sources,omitempty"`
	// Namespace: as Target.Namespace.
	Namespace string `json:"namespace,omitempty"`
	// Hard renders again even when the manifest cache holds the commit, and
	// replaces the cached set (a hard refresh).
	Hard bool `json:"hard,omitempty"`
	// Fresh lists the refs of remote Kustomize bases afresh (a refresh
	// that is not hard), rather than from the worker's refs cache.
	Fresh bool `json:"fresh,omitempty"`
	// Project is the app's project, whose sourceRepos bind what the
	// render fetches for the source's files; "" is the default project.
	Project string `json:"project,omitempty"`
	// Local renders the local tree of this digest (LocalSource) in place
	// of a commit: SHA is empty, Source.Path the directory in the tree.
	Local string `json:"local,omitempty"`
	// Unless, when set, spares the render if no commit moved a file under
	// the app's manifest-generate-paths since the last render
	// (RenderResult.Unchanged).
	Unless *PathsCheck `json:"unless,omitempty"`
}

// PathsCheck is the last render of an app with manifest-generate-paths:
// one entry per source (spec.source alone for an app of one source).
type PathsCheck struct {
	// Since is the commit (a chart's version) each source was rendered at.
	Since []string `json:"since"`
	// Paths are the repository paths, per source, whose files make its
	// manifests (app.Application.GeneratePaths).
	Paths [][]string `json:"paths"`
}

type RenderResult struct {
	Digest string `json:"digest"`
	Count  int    `json:"count"`
	// Children are the Applications the manifests hold (an app of apps).
	Children []app.Application `json:"children,omitempty"`
	// Hooks counts the hooks per phase (PreSync, Sync, PostSync, SyncFail,
	// PostDelete); nil when there are none.
	Hooks map[string]int `json:"hooks,omitempty"`
	// RemoteBases counts the remote Kustomize bases the manifests were
	// rendered with, and the Helm value files fetched from URLs: they can
	// change without a new commit, so such an app renders at every
	// reconcile (the manifest cache answers while their refs name the same
	// commits and the files hold the same bytes).
	RemoteBases int `json:"remoteBases,omitempty"`
	// SourceTypes say how the sources were rendered (Directory, Kustomize,
	// Helm, Plugin), one per source in order; empty from a worker older
	// than the field.
	SourceTypes []string `json:"sourceTypes,omitempty"`
	// Summary: the images and external URLs the manifests name (Argo CD's
	// status.summary); nil when they name none.
	Summary *app.Summary `json:"summary,omitempty"`
	// Unchanged: RenderInput.Unless held, nothing was rendered and the
	// last render stands for the new commits (every other field is empty).
	Unchanged bool `json:"unchanged,omitempty"`
}

type CompareInput struct {
	Target    Target `json:"target"`
	Region    string `json:"region"`
	Namespace string `json:"namespace,omitempty"`
	// Inventory is the app's objects in the region as its status last
	// listed them (the workflow's record of what the app put there). The
	// compare, the sync's prune and the live cache look among the kinds of
	// the desired objects and of the inventory, so that a kind gone from
	// Git entirely is still found (and pruned). internal/kube's requests
	// carry it under the same name.
	Inventory []app.ResourceKey `json:"known,omitempty"`
	// SyncOptions are the app's: Replace and Validate=false change how a
	// comparison predicts the result of a sync.
	SyncOptions []string `json:"syncOptions,omitempty"`
	// IgnoreDifferences are the app's spec.ignoreDifferences.
	IgnoreDifferences []app.IgnoreDifference `json:"ignoreDifferences,omitempty"`
	// Project is the app's project, whose kinds and destinations the
	// compare shows the app's objects against; "" is the default project.
	// The dry runs write as it says when the app's own workflow asked
	// (SyncInput.Project).
	Project string `json:"project,omitempty"`
}

type CompareResult struct {
	Resources []app.ResourceStatus `json:"resources,omitempty"`
	// Watched: the region worker's live cache saw the whole compare and
	// signals every change to the app's objects from now on (a drift,
	// including a change of health), so a poll may skip the next compare
	// while the region's workers stay the same (idle.go).
	Watched bool `json:"watched,omitempty"`
	// Excluded are the target's resources of kinds the region's
	// resource.exclusions/inclusions leave alone: neither compared nor
	// applied, and named in the app's ExcludedResourceWarning.
	Excluded []app.ResourceKey `json:"excluded,omitempty"`
}

type SyncInput struct {
	Target      Target `json:"target"`
	Region      string `json:"region"`
	Namespace   string `json:"namespace,omitempty"`
	OperationID string `json:"operationID"`
	// Inventory: as in CompareInput.
	Inventory   []app.ResourceKey `json:"known,omitempty"`
	Prune       bool              `json:"prune,omitempty"`
	DryRun      bool              `json:"dryRun,omitempty"`
	SyncOptions []string          `json:"syncOptions,omitempty"`
	// HealthTimeout bounds the wait for the applied resources to become healthy.
	HealthTimeout time.Duration `json:"healthTimeout,omitempty"`
	// IgnoreDifferences: as in CompareInput (ApplyOutOfSyncOnly compares).
	IgnoreDifferences []app.IgnoreDifference `json:"ignoreDifferences,omitempty"`
	// WaitHealthy waits for the last wave to become healthy too (a rollout
	// stage); otherwise the sync ends once its last wave is applied.
	WaitHealthy bool `json:"waitHealthy,omitempty"`
	// PruneConfirmed lets the prune delete objects marked Prune=confirm
	// (ferry app confirm); without it such a prune deletes nothing and the
	// result lists them in AwaitingPrune.
	PruneConfirmed bool `json:"pruneConfirmed,omitempty"`
	// NamespaceMetadata is the app's managedNamespaceMetadata.
	NamespaceMetadata *app.ManagedNamespaceMetadata `json:"namespaceMetadata,omitempty"`
	// Selection narrows a selective sync to the resources it names (and
	// the prune to them); nil: the whole app.
	Selection *app.Selection `json:"selection,omitempty"`
	// Project is the app's project, as its workflow runs it: the region
	// takes it from the input only when the app's own workflow scheduled
	// the activity (activities/region_caller.go), else asks that workflow.
	// "" (an input recorded before it carried one): ask.
	Project string `json:"project,omitempty"`
	// OnboardPlace is the workflow ID of a new app that holds a place at
	// the onboarding gate for this, its first sync: the region gives the
	// place back (SignalOnboardDone) the first time the sync waits rather
	// than writes, for a wave's health or a hook. "": none.
	OnboardPlace string `json:"onboardPlace,omitempty"`
}

type SyncResult struct {
	// Results are what the sync did to each object, also when it failed.
	Results []app.ResourceResult `json:"results,omitempty"`
	// Resources are the region's state right after the sync.
	Resources []app.ResourceStatus `json:"resources,omitempty"`
	// Hooks are the Sync-phase hooks run (ActivitySyncWithHooks).
	Hooks []HookResult `json:"hooks,omitempty"`
	// Failure is why the sync failed for good; nil when it succeeded.
	Failure *SyncFailure `json:"failure,omitempty"`
	// AwaitingPrune are the objects marked Prune=confirm that the prune
	// waits to delete, with every other, until the operation is confirmed.
	AwaitingPrune []app.ResourceKey `json:"awaitingPrune,omitempty"`
}

// SyncFailure is a region sync that failed in a way another attempt of
// the activity cannot fix. The activity returns it inside its result, with
// every result so far, because Temporal keeps no result of a failed
// activity; the workflow treats it as that activity's error.
type SyncFailure struct {
	// Type is the error type: ErrSyncFailed, ErrHookFailed, or
	// ErrUnreachable when the region's API server stopped answering
	// mid-sync (the region is shown Unreachable and synced again once it
	// answers).
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Err is the failure as the activity error it stands for.
func (f *SyncFailure) Err() error {
	if f == nil {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(f.Message, f.Type, nil)
}

type DeleteInput struct {
	App    string `json:"app"`
	Region string `json:"region"`
	// Propagation is the deletion propagation policy its resources finalizer
	// names (foreground or background); empty means background.
	Propagation string `json:"propagation,omitempty"`
	// Confirmed lets the delete delete objects marked Delete=confirm
	// (ferry app confirm); without it, when there are any, nothing is
	// deleted and the result lists them in AwaitingConfirmation.
	Confirmed bool `json:"confirmed,omitempty"`
	// Namespace is the app's namespace in the region.
	Namespace string `json:"namespace,omitempty"`
	// Project: as in SyncInput.
	Project string `json:"project,omitempty"`
}

type DeleteResult struct {
	Deleted []app.ResourceKey `json:"deleted,omitempty"`
	// AwaitingConfirmation are the objects marked Delete=confirm the
	// delete waits for a confirmation to delete (nothing was deleted).
	AwaitingConfirmation []app.ResourceKey `json:"awaitingConfirmation,omitempty"`
}

// Activities of an app of apps, on the control queue.
const (
	ActivityCompareChildren = "CompareChildren"
	ActivitySyncChildren    = "SyncChildren"
)

// ChildrenInput names the child Applications an app of apps renders, and
// those it created before (to find the ones gone from Git).
type ChildrenInput struct {
	Parent   string            `json:"parent"`
	Children []app.Application `json:"children,omitempty"`
	Previous []string          `json:"previous,omitempty"`
	// Prune deletes the previous children no longer rendered (SyncChildren).
	Prune  bool `json:"prune,omitempty"`
	DryRun bool `json:"dryRun,omitempty"`
	// Project is the parent's project, which its children are checked
	// against: taken from the input only when the parent's own workflow
	// scheduled the activity, as SyncInput.Project; "": ask the parent.
	Project string `json:"project,omitempty"`
}

type CompareChildrenResult struct {
	Resources []app.ResourceStatus `json:"resources,omitempty"`
	// Refused are the children that name an app of another owner.
	Refused []string `json:"refused,omitempty"`
}

type SyncChildrenResult struct {
	Results []app.ResourceResult `json:"results,omitempty"`
	// Applied are the children that now run as apps.
	Applied []string `json:"applied,omitempty"`
}

// SourceRevision is one source of a multi-source app at its resolved
// revision: a commit SHA, or a chart version for a chart source.
type SourceRevision struct {
	Source   app.Source `json:"source"`
	Revision string     `json:"revision"`
}

// Revisions are the target's revisions, one per source of a multi-source
// app (status.sync.revisions); nil for an app of one source.
func (t Target) Revisions() []string {
	if len(t.Sources) == 0 {
		return nil
	}
	if revs := strings.Split(t.Revision, ","); t.Revision != "" && len(revs) == len(t.Sources) {
		return revs // the commits the rendered set stands for
	}
	out := make([]string, len(t.Sources))
	for i, s := range t.Sources {
		out[i] = s.Revision
	}
	return out
}

// SourceList is the target's sources: spec.sources', or spec.source alone.
func (t Target) SourceList() []app.Source {
	if len(t.Sources) == 0 {
		return []app.Source{t.Source}
	}
	out := make([]app.Source, len(t.Sources))
	for i, s := range t.Sources {
		out[i] = s.Source
	}
	return out
}

// ActivitySyncWindows decides, for an app and a time, what the sync windows
// of its project say (control worker, run as a local activity).
const ActivitySyncWindows = "SyncWindows"

// ErrProjectNotFound: the app's project does not exist (activity error type).
const ErrProjectNotFound = "ProjectNotFound"

// SyncWindowsInput asks whether a sync of the app may run at Now.
type SyncWindowsInput struct {
	Project string            `json:"project"`
	Subject app.WindowSubject `json:"subject"`
	// Now is the workflow's time, so a replay decides as the run did.
	Now    time.Time `json:"now"`
	Manual bool      `json:"manual,omitempty"`
}

type SyncWindowsResult struct {
	app.WindowDecision
}
