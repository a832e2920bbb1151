package app

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
	Project string `json:"project,omitempty"`
	// Source is the app's one source; empty when Sources is set.
	Source Source `json:"source"`
	// Sources are the sources of a multi-source app (two or more; Parse
	// reads a list of one as Source). Read both through SourceList.
	Sources     []Source     `json:"sources,omitempty"`
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
	// ManagedNamespaceMetadata are the labels and annotations the namespace
	// that CreateNamespace=true makes carries, applied at every sync.
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
