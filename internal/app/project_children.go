package app

import (
	"fmt"
	"strings"
)

// ChildProjectsAnnotation lists, on an AppProject, the other projects whose
// apps the project's apps may create: the children an app of apps renders
// from Git and the apps an ApplicationSet of the project generates. Its value
// is a comma-separated list of project names or globs ("platform, team-a-*").
// A child of any other project is refused before it starts: whoever can
// commit to a parent's repository must not create apps in projects that
// admit more than the parent's does. It is an annotation, not a spec field,
// so that the same AppProject file still applies to Argo CD, which keeps
// and ignores it.
const ChildProjectsAnnotation = "ferry.dev/child-projects"

// ChildProjects are the patterns of ChildProjectsAnnotation, trimmed; empty
// entries are dropped.
func (p *AppProject) ChildProjects() []string {
	var out []string
	for _, s := range strings.Split(p.Metadata.Annotations[ChildProjectsAnnotation], ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// PermitsChildProject reports whether an app of p may create an app of
// project child: its own project always, the projects its annotation lists,
// and, for the built-in default project, which allows everything, any. An
// applied default object allows what its annotation lists, as any project.
func (p *AppProject) PermitsChildProject(child string) bool {
	if child == "" {
		child = DefaultProject
	}
	if child == p.Metadata.Name || p.IsBuiltIn() {
		return true
	}
	for _, pattern := range p.ChildProjects() {
		if globMatchPlain(pattern, child) {
			return true
		}
	}
	return false
}

// ChildProjectError is a child app refused for its project: it is neither
// created nor changed.
type ChildProjectError struct {
	// Child names the refused app; ChildProject is its spec.project.
	Child, ChildProject string
	// Parent describes who creates it (`app of apps "platform"`,
	// `applicationset "web"`); ParentProject is the project it runs under.
	Parent, ParentProject string
}

func (e *ChildProjectError) Error() string {
	return fmt.Sprintf("child app %q is in project %q, but its parent %s is in project %q, which does not allow children in %q: "+
		"a child app must be in its parent's project, or in one listed in the metadata.annotations[%q] of project %q; nothing of app %q was created or changed",
		e.Child, e.ChildProject, e.Parent, e.ParentProject, e.ChildProject, ChildProjectsAnnotation, e.ParentProject, e.Child)
}

// CheckChild returns a *ChildProjectError when an app of p, described by
// parent, may not create child; nil when it may.
func (p *AppProject) CheckChild(parent string, child *Application) error {
	if p.PermitsChildProject(child.ProjectOf()) {
		return nil
	}
	return &ChildProjectError{Child: child.Metadata.Name, ChildProject: child.ProjectOf(), Parent: parent, ParentProject: p.Metadata.Name}
}

func (v *validator) childProjects(p *AppProject) {
	raw, ok := p.Metadata.Annotations[ChildProjectsAnnotation]
	if !ok {
		return
	}
	field := fmt.Sprintf("metadata.annotations[%q]", ChildProjectsAnnotation)
	list := p.ChildProjects()
	if len(list) == 0 {
		v.add(field, "%q lists no project: write project names or globs separated by commas, e.g. \"platform, team-a-*\", or remove the annotation", raw)
	}
	for _, pattern := range list {
		if strings.HasPrefix(pattern, "!") {
			v.add(field, "%q: deny patterns are not supported here; list only the projects to allow", pattern)
			continue
		}
		v.glob(field, pattern)
	}
}
