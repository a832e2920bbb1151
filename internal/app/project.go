package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
)

const (
	// ProjectKind is the kind of Argo CD's AppProject.
	ProjectKind = "AppProject"
	// DefaultProject is the project of an app whose spec.project is empty.
	// Until an AppProject object of that name is applied, it is built in
	// and allows everything, as Argo CD's default project does out of the
	// box; the object, once applied, replaces it (as Argo CD lets teams
	// lock the default project down), and deleting it restores the
	// built-in one.
	DefaultProject = "default"
)

// ErrNotOneProject is wrapped by ParseProject's error when the input holds
// no document, several documents, or a List.
var ErrNotOneProject = errors.New("expected exactly one AppProject")

// AppProject is Argo CD's AppProject as Ferry reads it: which repositories
// an app of the project may render from, where it may deploy, and which
// kinds it may create.
type AppProject struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Metadata   ObjectMeta  `json:"metadata"`
	Spec       ProjectSpec `json:"spec"`
}

// ProjectSpec holds the rules of a project. The matching follows Argo CD's
// (see project_match.go).
type ProjectSpec struct {
	Description string `json:"description,omitempty"`
	// SourceRepos are globs of repository URLs; "!" denies. Empty allows
	// no repository.
	SourceRepos []string `json:"sourceRepos,omitempty"`
	// Destinations are the regions and namespaces apps may deploy to;
	// empty allows none.
	Destinations []ProjectDestination `json:"destinations,omitempty"`
	// ClusterResourceWhitelist: the cluster-scoped kinds allowed; empty
	// allows none.
	ClusterResourceWhitelist []GroupKind `json:"clusterResourceWhitelist,omitempty"`
	ClusterResourceBlacklist []GroupKind `json:"clusterResourceBlacklist,omitempty"`
	// NamespaceResourceWhitelist: the namespaced kinds allowed. Left out
	// (null), every namespaced kind is; an explicit empty list allows none,
	// as in Argo CD, which is why the field has no omitempty: the
	// difference must survive a round trip through JSON.
	NamespaceResourceWhitelist []GroupKind `json:"namespaceResourceWhitelist"`
	NamespaceResourceBlacklist []GroupKind `json:"namespaceResourceBlacklist,omitempty"`
	// SyncWindows are the times the project's apps may or may not sync
	// (syncwindow.go).
	SyncWindows []SyncWindow `json:"syncWindows,omitempty"`
	// DestinationServiceAccounts name the ServiceAccount a region worker
	// impersonates to write an app's objects to a destination: the first
	// entry that matches the destination wins (project_impersonate.go).
	DestinationServiceAccounts []DestinationServiceAccount `json:"destinationServiceAccounts,omitempty"`
	// OrphanedResources, when set, asks for the objects in an app's
	// destination namespaces that no app tracks (project_orphans.go).
	OrphanedResources *OrphanedResources `json:"orphanedResources,omitempty"`
	// SourceNamespaces are the namespaces, other than the control
	// namespace, whose Applications may use the project: globs (team-*),
	// or regular expressions between slashes (/^team-[a-z]+$/); no "!"
	// deny. Every project permits the control namespace; Ferry's apps all
	// live there until apps in other namespaces come.
	SourceNamespaces []string `json:"sourceNamespaces,omitempty"`
	// PermitOnlyProjectScopedClusters lets the project's apps deploy only
	// to the regions scoped to it (a region's project in the regions
	// configuration) that its destinations allow.
	PermitOnlyProjectScopedClusters bool `json:"permitOnlyProjectScopedClusters,omitempty"`
	// Roles are the project's roles, as Argo CD's: casbin policies on the
	// project's own apps, granted to the OIDC groups listed and to the JWT
	// tokens issued for the role. ferry-server, Ferry's API server,
	// enforces them.
	Roles []ProjectRole `json:"roles,omitempty"`
}

// DestinationServiceAccount is Argo CD's (2.13 and later): the
// ServiceAccount that syncs to matching destinations impersonate. Server
// and Namespace are globs; Name, a glob of regions, is Ferry's, as in
// destinations.
type DestinationServiceAccount struct {
	Server    string `json:"server,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// DefaultServiceAccount is "name" (in the destination namespace) or
	// "namespace:name".
	DefaultServiceAccount string `json:"defaultServiceAccount"`
}

// ProjectDestination is one allowed destination: a region by name or by
// server, and a namespace. All three are globs; "!" denies.
type ProjectDestination struct {
	Name      string `json:"name,omitempty"`
	Server    string `json:"server,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// GroupKind names a kind of resource: group "" is the core group. Both are
// path.Match globs, as in Argo CD.
type GroupKind struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

// DefaultAppProject is the built-in default project: every repository,
// every destination, every kind.
func DefaultAppProject() *AppProject {
	return &AppProject{
		APIVersion: APIVersion,
		Kind:       ProjectKind,
		Metadata:   ObjectMeta{Name: DefaultProject},
		Spec: ProjectSpec{
			Description:              "Ferry's built-in project: allows everything",
			SourceRepos:              []string{"*"},
			Destinations:             []ProjectDestination{{Name: "*", Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []GroupKind{{Group: "*", Kind: "*"}},
		},
	}
}

// IsBuiltIn reports whether p is Ferry's built-in default project, the one
// in force while no AppProject object named default is applied: it allows
// everything, so a check against it can be skipped. An applied default
// object with the built-in's very rules (and no child projects annotation)
// counts as built in too, since it allows the same.
func (p *AppProject) IsBuiltIn() bool {
	return p != nil && p.Metadata.Name == DefaultProject && len(p.ChildProjects()) == 0 &&
		p.Digest() == builtInDigest
}

var builtInDigest = DefaultAppProject().Digest()

// ProjectOf is the project an app belongs to: spec.project, or default.
func (a *Application) ProjectOf() string {
	if a.Spec.Project == "" {
		return DefaultProject
	}
	return a.Spec.Project
}

// Digest identifies the project's rules: a region worker that is handed
// rules with a digest can tell them from the project it reads itself.
func (p *AppProject) Digest() string {
	b, _ := json.Marshal(struct {
		Name string      `json:"name"`
		Spec ProjectSpec `json:"spec"`
	}{p.Metadata.Name, p.Spec})
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// projectUnsupported are AppProject fields Argo CD has and Ferry does not
// implement yet. A value that asks for nothing (an empty list) is accepted,
// since dropping it changes nothing; any other value is refused, since the
// user relies on what it does.
var projectUnsupported = map[string]string{
	"spec.syncWindows.andOperator":         "matching a window's applications, namespaces and clusters all together is not supported yet: remove andOperator; the window then applies to an app when any of them matches",
	"spec.syncWindows.syncOverrun":         "not supported yet: remove it; a sync that started before a deny window opened always runs to its end",
	"spec.signatureKeys":                   "commit signature verification is not supported yet: remove the field",
	"spec.clusterResourceWhitelist.name":   resourceNameUnsupported,
	"spec.clusterResourceBlacklist.name":   resourceNameUnsupported,
	"spec.namespaceResourceWhitelist.name": resourceNameUnsupported,
	"spec.namespaceResourceBlacklist.name": resourceNameUnsupported,
}

const resourceNameUnsupported = "matching resources by name is not supported yet: remove the name (the entry then covers every object of its kind: in a whitelist, that allows more) or the entry"

// projectSchema is the field walk of an AppProject.
var projectSchema = schema{noun: ProjectKind, unsupported: func(p string) (string, bool) {
	msg, ok := projectUnsupported[p]
	return msg, ok
}}

var projectDoc = docKind{noun: ProjectKind, errNotOne: ErrNotOneProject}

// ParseProject reads one AppProject from YAML or JSON, as strictly as Parse
// reads an Application: unknown fields, fields Ferry does not implement and
// values of the wrong type are all reported at once in a *ValidationError
// (Kind ProjectKind). Call ValidateProject to check values.
func ParseProject(data []byte) (*AppProject, error) {
	raw, obj, err := readOneObject(data, projectDoc)
	if err != nil {
		return nil, err
	}
	kind, _ := obj["kind"].(string)
	if kind != "" && kind != ProjectKind {
		apiVersion, _ := obj["apiVersion"].(string)
		return nil, &ValidationError{Kind: kind, App: nameOf(obj), Errors: []FieldError{{Field: "kind",
			Message: fmt.Sprintf("found %s (%s), not an AppProject: apply Applications with `ferry app apply -f FILE`", kind, apiVersion)}}}
	}
	dropEmptyUnsupported(obj)
	if errs := projectSchema.check(obj, reflect.TypeFor[AppProject](), ""); len(errs) > 0 {
		return nil, &ValidationError{Kind: ProjectKind, App: nameOf(obj), Errors: errs}
	}
	var p AppProject
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("parse AppProject %q: %w", nameOf(obj), err)
	}
	return &p, nil
}

// dropEmptyUnsupported removes unsupported spec fields whose value is null
// or an empty list: they ask for nothing.
func dropEmptyUnsupported(obj map[string]any) {
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return
	}
	for _, key := range slices.Sorted(maps.Keys(projectUnsupported)) {
		field := key[len("spec."):]
		v, present := spec[field]
		if !present {
			continue
		}
		if list, isList := v.([]any); v == nil || (isList && len(list) == 0) {
			delete(spec, field)
		}
	}
}
