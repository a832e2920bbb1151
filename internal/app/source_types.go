package app

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Source is where an app's manifests come from: spec.source, or one entry
// of spec.sources.
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
	// Ref names an entry of spec.sources for the others' Helm value files:
	// $ref/path is path from the root of this source's repository. An
	// entry with a ref and no path renders nothing (see RendersNothing).
	Ref string `json:"ref,omitempty"`
	// Name names an entry of spec.sources where Ferry shows it.
	Name string `json:"name,omitempty"`
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

// SecretsValueFilePrefix marks a Helm value file that SOPS encrypted, as
// helm-secrets users write it in Argo CD: valueFiles: [secrets://secrets.yaml].
const SecretsValueFilePrefix = "secrets://"

// SecretsValueFile gives the path of a value file named with
// SecretsValueFilePrefix, and whether it was; vf itself when it was not.
func SecretsValueFile(vf string) (string, bool) {
	if rest, ok := strings.CutPrefix(vf, SecretsValueFilePrefix); ok {
		return rest, true
	}
	return vf, false
}
