package appset

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Kind is the kind Ferry reads ApplicationSets as.
const Kind = "ApplicationSet"

// ApplicationSet is Argo CD's argoproj.io/v1alpha1 ApplicationSet.
type ApplicationSet struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   app.ObjectMeta `json:"metadata"`
	Spec       Spec           `json:"spec"`
}

type Spec struct {
	GoTemplate        bool        `json:"goTemplate,omitempty"`
	GoTemplateOptions []string    `json:"goTemplateOptions,omitempty"`
	Generators        []Generator `json:"generators"`
	Template          Template    `json:"template"`
	// TemplatePatch is a Go template of a patch merged over each generated
	// Application (goTemplate only, as in Argo CD).
	TemplatePatch                string                       `json:"templatePatch,omitempty"`
	SyncPolicy                   *SyncPolicy                  `json:"syncPolicy,omitempty"`
	Strategy                     *Strategy                    `json:"strategy,omitempty"`
	IgnoreApplicationDifferences []ApplicationMatchExpression `json:"ignoreApplicationDifferences,omitempty"`
	PreservedFields              *PreservedFields             `json:"preservedFields,omitempty"`
	ApplyNestedSelectors         bool                         `json:"applyNestedSelectors,omitempty"`
}

// Template is the Application every parameter set is rendered into. Its
// spec stays free-form until rendered: its strings hold placeholders.
type Template struct {
	Metadata TemplateMeta   `json:"metadata"`
	Spec     map[string]any `json:"spec"`
}

type TemplateMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Finalizers  []string          `json:"finalizers,omitempty"`
}

// Generator is one entry of spec.generators: exactly one kind is set.
type Generator struct {
	List     *ListGenerator     `json:"list,omitempty"`
	Clusters *ClustersGenerator `json:"clusters,omitempty"`
	Git      *GitGenerator      `json:"git,omitempty"`
	Matrix   *MatrixGenerator   `json:"matrix,omitempty"`
	Merge    *MergeGenerator    `json:"merge,omitempty"`
	// PullRequest generates an app per open pull request of a GitHub,
	// GitLab or Gitea repository (pullrequest.go).
	PullRequest *PullRequestGenerator `json:"pullRequest,omitempty"`
	// SCMProvider generates an app per repository (and branch) of a
	// GitHub organization, GitLab group or Gitea organization (scmprovider.go).
	SCMProvider *SCMProviderGenerator `json:"scmProvider,omitempty"`
	// ClusterDecisionResource yields the clusters that the status of
	// duck-typed resources of the control namespace decides on.
	ClusterDecisionResource *DuckTypeGenerator `json:"clusterDecisionResource,omitempty"`
	// Plugin yields the parameter sets an HTTP service answers.
	Plugin *PluginGenerator `json:"plugin,omitempty"`
	// Selector filters the generator's parameter sets by their values.
	Selector *LabelSelector `json:"selector,omitempty"`
}

type ListGenerator struct {
	Elements     []map[string]any `json:"elements,omitempty"`
	ElementsYaml string           `json:"elementsYaml,omitempty"`
	Template     *Template        `json:"template,omitempty"`
}

type ClustersGenerator struct {
	Selector *LabelSelector    `json:"selector,omitempty"`
	Values   map[string]string `json:"values,omitempty"`
	Template *Template         `json:"template,omitempty"`
}

type GitGenerator struct {
	RepoURL         string            `json:"repoURL"`
	Revision        string            `json:"revision,omitempty"`
	Directories     []GitPath         `json:"directories,omitempty"`
	Files           []GitPath         `json:"files,omitempty"`
	PathParamPrefix string            `json:"pathParamPrefix,omitempty"`
	Values          map[string]string `json:"values,omitempty"`
	// RequeueAfterSeconds is how often the repository is read; default 3 minutes, as in Argo CD.
	RequeueAfterSeconds *int64    `json:"requeueAfterSeconds,omitempty"`
	Template            *Template `json:"template,omitempty"`
}

type GitPath struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude,omitempty"`
}

type MatrixGenerator struct {
	Generators []Generator `json:"generators"`
	Template   *Template   `json:"template,omitempty"`
}

type MergeGenerator struct {
	Generators []Generator `json:"generators"`
	MergeKeys  []string    `json:"mergeKeys"`
	Template   *Template   `json:"template,omitempty"`
}

// LabelSelector is Kubernetes' label selector.
type LabelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels,omitempty"`
	MatchExpressions []Requirement     `json:"matchExpressions,omitempty"`
}

type Requirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// Applications-sync policies, as Argo CD names them.
const (
	PolicySync         = "sync"
	PolicyCreateOnly   = "create-only"
	PolicyCreateUpdate = "create-update"
	PolicyCreateDelete = "create-delete"
)

type SyncPolicy struct {
	PreserveResourcesOnDeletion bool `json:"preserveResourcesOnDeletion,omitempty"`
	// ApplicationsSync limits what the set does to its apps; empty: sync.
	ApplicationsSync string `json:"applicationsSync,omitempty"`
}

type Strategy struct {
	Type        string       `json:"type,omitempty"`
	RollingSync *RollingSync `json:"rollingSync,omitempty"`
}

type RollingSync struct {
	Steps []RollingStep `json:"steps,omitempty"`
	// DefaultPrune: the set's syncs prune the apps that have no
	// syncPolicy.automated section saying otherwise.
	DefaultPrune bool `json:"defaultPrune,omitempty"`
}

type RollingStep struct {
	MatchExpressions []Requirement `json:"matchExpressions,omitempty"`
	// MaxUpdate bounds the apps of the step that sync at once: a count or
	// a percentage of the step's apps; nil: all of them.
	MaxUpdate *intstr.IntOrString `json:"maxUpdate,omitempty"`
}

type ApplicationMatchExpression struct {
	Name              string   `json:"name,omitempty"`
	JSONPointers      []string `json:"jsonPointers,omitempty"`
	JQPathExpressions []string `json:"jqPathExpressions,omitempty"`
}

type PreservedFields struct {
	Annotations []string `json:"annotations,omitempty"`
	Labels      []string `json:"labels,omitempty"`
}

// Policy is the applications-sync policy in effect.
func (s *ApplicationSet) Policy() string {
	if s.Spec.SyncPolicy == nil || s.Spec.SyncPolicy.ApplicationsSync == "" {
		return PolicySync
	}
	return s.Spec.SyncPolicy.ApplicationsSync
}

// PreserveResources reports whether deleting an app keeps its resources.
func (s *ApplicationSet) PreserveResources() bool {
	return s.Spec.SyncPolicy != nil && s.Spec.SyncPolicy.PreserveResourcesOnDeletion
}

// Creates, Updates and Deletes say what the policy lets the set do.
func (s *ApplicationSet) Updates() bool {
	p := s.Policy()
	return p == PolicySync || p == PolicyCreateUpdate
}

func (s *ApplicationSet) Deletes() bool { return PolicyDeletes(s.Policy()) }

// PolicyDeletes reports whether applicationsSync policy p lets a set
// delete its apps: sync and create-delete.
func PolicyDeletes(p string) bool { return p == PolicySync || p == PolicyCreateDelete }

// GitRepos are the repositories of the set's git generators, nested ones
// included, sorted and without repeats.
func (s *ApplicationSet) GitRepos() []string {
	var out []string
	var walk func(gs []Generator)
	walk = func(gs []Generator) {
		for _, g := range gs {
			switch {
			case g.Git != nil:
				out = appendUnique(out, g.Git.RepoURL)
			case g.Matrix != nil:
				walk(g.Matrix.Generators)
			case g.Merge != nil:
				walk(g.Merge.Generators)
			}
		}
	}
	walk(s.Spec.Generators)
	return out
}

func appendUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// Differs tells whether a generated app differs from the running one in
// what the set controls: its spec, labels, annotations and finalizers, as
// Argo CD compares them.
func Differs(live, generated *app.Application) bool {
	l, g := live.Metadata, generated.Metadata
	return live.SpecDigest() != generated.SpecDigest() || !maps.Equal(l.Labels, g.Labels) ||
		!maps.Equal(l.Annotations, g.Annotations) || !slices.Equal(l.Finalizers, g.Finalizers)
}
