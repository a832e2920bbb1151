package app

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	APIVersion = "argoproj.io/v1alpha1"
	Kind       = "Application"
)

// Application is Argo CD's Application resource as Ferry reads it.
type Application struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   ObjectMeta `json:"metadata"`
	Spec       Spec       `json:"spec"`

	// sourceFromSources: Parse read spec.source from a one-entry
	// spec.sources, and Validate names its fields there.
	sourceFromSources bool
}

// ObjectMeta is the part of Kubernetes' object metadata an Application file
// carries. Fields an API server writes (uid, resourceVersion, ...) are
// dropped by Parse.
type ObjectMeta struct {
	Name string `json:"name"`
	// Namespace is accepted (Argo CD's Applications live in "argocd") and
	// otherwise ignored: an Application is identified by its name alone.
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Finalizers  []string          `json:"finalizers,omitempty"`
}

type Spec struct {
	Project     string       `json:"project,omitempty"`
	Source      Source       `json:"source"`
	Destination *Destination `json:"destination,omitempty"`
	// Destinations is Ferry's extension for fan-out: one entry per region.
	// Exactly one of Destination and Destinations is set; read both through
	// Application.Destinations.
	Destinations      []Destination      `json:"destinations,omitempty"`
	SyncPolicy        *SyncPolicy        `json:"syncPolicy,omitempty"`
	IgnoreDifferences []IgnoreDifference `json:"ignoreDifferences,omitempty"`
	// PollInterval is Ferry's: how often the app polls Git ("3m" when empty).
	PollInterval string `json:"pollInterval,omitempty"`
	// RevisionHistoryLimit is how many deployments status.history keeps;
	// read it through Application.HistoryLimit (10 when unset, as Argo CD).
	RevisionHistoryLimit *int64 `json:"revisionHistoryLimit,omitempty"`
	// Info is free-form notes shown by `ferry app get`, as Argo CD's UI
	// shows them.
	Info []Info `json:"info,omitempty"`
}

// Info is one entry of spec.info: a name and a value (often a URL).
type Info struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type Source struct {
	RepoURL        string `json:"repoURL"`
	TargetRevision string `json:"targetRevision,omitempty"`
	Path           string `json:"path,omitempty"`
	// Chart names a chart of the Helm repository (http(s)://) or OCI
	// registry (oci://, or host/path) at RepoURL; TargetRevision is then
	// its version or a semver constraint, and Path is not used.
	Chart     string           `json:"chart,omitempty"`
	Directory *DirectorySource `json:"directory,omitempty"`
	Kustomize *KustomizeSource `json:"kustomize,omitempty"`
	Helm      *HelmSource      `json:"helm,omitempty"`
	// Plugin renders the path with a config-management plugin of the
	// worker's --plugin-dir: the one it names, or the one whose discover
	// matches when it names none.
	Plugin *PluginSource `json:"plugin,omitempty"`
}

type DirectorySource struct {
	Recurse bool           `json:"recurse,omitempty"`
	Include string         `json:"include,omitempty"`
	Exclude string         `json:"exclude,omitempty"`
	Jsonnet *JsonnetSource `json:"jsonnet,omitempty"`
}

// JsonnetSource is how the .jsonnet files of a directory source are
// evaluated, as in Argo CD: external variables and top-level arguments
// (values may name the build environment, $ARGOCD_APP_NAME and the
// like), and library directories relative to the repository root.
type JsonnetSource struct {
	ExtVars []JsonnetVar `json:"extVars,omitempty"`
	TLAs    []JsonnetVar `json:"tlas,omitempty"`
	Libs    []string     `json:"libs,omitempty"`
}

// JsonnetVar is a string, or Jsonnet code when Code is set.
type JsonnetVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Code  bool   `json:"code,omitempty"`
}

type KustomizeSource struct {
	NamePrefix        string            `json:"namePrefix,omitempty"`
	NameSuffix        string            `json:"nameSuffix,omitempty"`
	Images            []string          `json:"images,omitempty"`
	CommonLabels      map[string]string `json:"commonLabels,omitempty"`
	CommonAnnotations map[string]string `json:"commonAnnotations,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	// ForceCommonLabels and ForceCommonAnnotations let commonLabels and
	// commonAnnotations replace the kustomization's values of the same
	// keys, as kustomize edit add label/annotation --force.
	ForceCommonLabels      bool `json:"forceCommonLabels,omitempty"`
	ForceCommonAnnotations bool `json:"forceCommonAnnotations,omitempty"`
	// CommonAnnotationsEnvsubst expands $VAR and ${VAR} of Argo CD's build
	// environment ($ARGOCD_APP_NAME, …) in commonAnnotations' values.
	CommonAnnotationsEnvsubst bool `json:"commonAnnotationsEnvsubst,omitempty"`
	// LabelWithoutSelector adds commonLabels as a labels entry that leaves
	// selectors alone (kustomize edit add label --without-selector);
	// LabelIncludeTemplates also puts them on pod templates.
	LabelWithoutSelector  bool `json:"labelWithoutSelector,omitempty"`
	LabelIncludeTemplates bool `json:"labelIncludeTemplates,omitempty"`
	// Replicas set the replica counts of resources by name (kustomize edit
	// set replicas).
	Replicas []KustomizeReplica `json:"replicas,omitempty"`
	// Patches are added to the kustomization's patches.
	Patches []KustomizePatch `json:"patches,omitempty"`
	// Components are added to the kustomization's components (paths
	// relative to the source's path); IgnoreMissingComponents skips those
	// that do not exist.
	Components              []string `json:"components,omitempty"`
	IgnoreMissingComponents bool     `json:"ignoreMissingComponents,omitempty"`
	// Version names the kustomize binary in Argo CD (argocd-cm's
	// kustomize.version.*); Ferry renders with the Kustomize it is built
	// with, whatever it says.
	Version string `json:"version,omitempty"`
	// KubeVersion and APIVersions are what Kustomize's helmCharts see in
	// Argo CD; Ferry refuses helmCharts, so they change nothing.
	KubeVersion string   `json:"kubeVersion,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
}

// KustomizeReplica is one replicas override: count is a number, or a
// string holding one, as in Argo CD.
type KustomizeReplica struct {
	Name  string             `json:"name"`
	Count intstr.IntOrString `json:"count"`
}

// KustomizePatch is one entry of a kustomization's patches: a file (path,
// relative to the source's path) or an inline patch, with its target.
type KustomizePatch struct {
	Path    string             `json:"path,omitempty"`
	Patch   string             `json:"patch,omitempty"`
	Target  *KustomizeSelector `json:"target,omitempty"`
	Options map[string]bool    `json:"options,omitempty"`
}

// KustomizeSelector selects the resources a patch applies to.
type KustomizeSelector struct {
	Group              string `json:"group,omitempty"`
	Version            string `json:"version,omitempty"`
	Kind               string `json:"kind,omitempty"`
	Name               string `json:"name,omitempty"`
	Namespace          string `json:"namespace,omitempty"`
	LabelSelector      string `json:"labelSelector,omitempty"`
	AnnotationSelector string `json:"annotationSelector,omitempty"`
}

type HelmSource struct {
	ReleaseName  string          `json:"releaseName,omitempty"`
	ValueFiles   []string        `json:"valueFiles,omitempty"`
	Values       string          `json:"values,omitempty"`
	ValuesObject map[string]any  `json:"valuesObject,omitempty"`
	Parameters   []HelmParameter `json:"parameters,omitempty"`
	// Namespace is .Release.Namespace; empty means the destination's.
	Namespace string `json:"namespace,omitempty"`
	// KubeVersion and APIVersions override and extend the Capabilities
	// the worker renders with (render.Capabilities).
	KubeVersion string   `json:"kubeVersion,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
	// IgnoreMissingValueFiles skips valueFiles that do not exist.
	IgnoreMissingValueFiles bool `json:"ignoreMissingValueFiles,omitempty"`
	// SkipCrds leaves the chart's crds/ out.
	SkipCrds bool `json:"skipCrds,omitempty"`
	// SkipSchemaValidation skips values.schema.json.
	SkipSchemaValidation bool `json:"skipSchemaValidation,omitempty"`
	// SkipTests is accepted for Argo CD's files: Ferry never renders
	// Helm test hooks.
	SkipTests bool `json:"skipTests,omitempty"`
	// Version is the Helm major version: empty or v3, the only one Ferry
	// (and Argo CD since 2.5) renders with.
	Version string `json:"version,omitempty"`
	// FileParameters set values to the content of files of the repository
	// (helm template --set-file), after every other value.
	FileParameters []HelmFileParameter `json:"fileParameters,omitempty"`
	// PassCredentials sends a Helm repository's credentials to every domain
	// its charts are fetched from, not only the repository's own.
	PassCredentials bool `json:"passCredentials,omitempty"`
}

// HelmFileParameter is one helm.fileParameters entry: the value's path and
// the file, relative to the chart (spec.source.path), inside the repository.
type HelmFileParameter struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

type HelmParameter struct {
	Name        string `json:"name"`
	Value       string `json:"value"`
	ForceString bool   `json:"forceString,omitempty"`
}

// Destination is one region. Name is the region; Server is accepted only as
// Argo CD's in-cluster address, mapped to the operator's in-cluster region.
type Destination struct {
	Name      string `json:"name,omitempty"`
	Server    string `json:"server,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

type SyncPolicy struct {
	Automated   *Automated   `json:"automated,omitempty"`
	SyncOptions []string     `json:"syncOptions,omitempty"`
	Retry       *RetryPolicy `json:"retry,omitempty"`
	// Rollout is Ferry's: sync the regions stage by stage instead of all at
	// once.
	Rollout *Rollout `json:"rollout,omitempty"`
	// ManagedNamespaceMetadata: see namespace_metadata.go.
	ManagedNamespaceMetadata *ManagedNamespaceMetadata `json:"managedNamespaceMetadata,omitempty"`
}

// Rollout syncs an app's regions in stages: a stage must be Synced and
// Healthy (and stay so for its soak time) before the next one starts; a
// failure halts the rollout and leaves the later stages as they were.
type Rollout struct {
	Stages []RolloutStage `json:"stages"`
}

// RolloutStage is a set of regions synced together.
type RolloutStage struct {
	Regions []string `json:"regions"`
	// Soak is how long the stage must stay Synced and Healthy before the
	// next stage starts (a Go duration; none when empty).
	Soak string `json:"soak,omitempty"`
}

type Automated struct {
	// Enabled is Argo CD's switch to turn automation off without removing
	// the section; nil means enabled.
	Enabled    *bool `json:"enabled,omitempty"`
	Prune      bool  `json:"prune,omitempty"`
	SelfHeal   bool  `json:"selfHeal,omitempty"`
	AllowEmpty bool  `json:"allowEmpty,omitempty"`
}

// RetryPolicy is syncPolicy.retry; read it through MaxRetries, ShouldRetry
// and Delay, which apply Argo CD's defaults.
type RetryPolicy struct {
	// Limit is how many times a failed sync is retried; negative: unlimited.
	Limit   int64    `json:"limit,omitempty"`
	Backoff *Backoff `json:"backoff,omitempty"`
	// Refresh is accepted as Argo CD's "retry with the latest revision":
	// Ferry retries the failed sync's revision, and an automated app moves
	// to a newer commit at its next poll once the operation ends.
	Refresh bool `json:"refresh,omitempty"`
}

// Backoff is the delay between retries. Durations are Go durations ("5s",
// "3m") or bare seconds ("5"), as in Argo CD.
type Backoff struct {
	Duration    string `json:"duration,omitempty"`
	Factor      *int64 `json:"factor,omitempty"`
	MaxDuration string `json:"maxDuration,omitempty"`
}

type IgnoreDifference struct {
	Group                 string   `json:"group,omitempty"`
	Kind                  string   `json:"kind"`
	Name                  string   `json:"name,omitempty"`
	Namespace             string   `json:"namespace,omitempty"`
	JSONPointers          []string `json:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty"`
}

// ResourceKey names one Kubernetes object in one region.
type ResourceKey struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

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
}

type SyncStatus struct {
	Status   SyncStatusCode `json:"status"`
	Revision string         `json:"revision,omitempty"`
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
	// PostSync is the run of the operation's PostSync hooks, which goes on
	// after the operation (a workflow of its own).
	PostSync *HookRun `json:"postSync,omitempty"`
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
	Region  string `json:"region"`
	Action  string `json:"action"` // created, configured, unchanged, pruned, failed
	Message string `json:"message,omitempty"`
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
