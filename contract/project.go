package contract

import (
	"fmt"

	"github.com/ferry-gitops/ferry/internal/app"
)

// The public Temporal contract of an AppProject (see DESIGN.md): one
// workflow per project holds its spec, durable as long as the project
// exists. The built-in default project has no workflow.
const (
	// ProjectWorkflow is the workflow type of every AppProject.
	ProjectWorkflow = "AppProject"
	// QueryProject answers the project's ProjectView.
	QueryProject = "project"
	// UpdateProjectSpec replaces the spec (an AppProject as JSON).
	UpdateProjectSpec = "spec"
	// UpdateProjectDelete ends the project, refused while apps use it.
	UpdateProjectDelete = "delete"

	// ActivityProjectApps lists the apps of a project (control queue).
	ActivityProjectApps = "ProjectApps"
)

// ProjectWorkflowID is the ID of the workflow of the project called name.
func ProjectWorkflowID(name string) string { return "project/" + name }

// ProjectView is what the project query answers.
type ProjectView struct {
	app.AppProject
	// Digest identifies the rules (AppProject.Digest).
	Digest string `json:"digest"`
}

// ViewOfProject is the view of a project's spec.
func ViewOfProject(p *app.AppProject) ProjectView {
	return ProjectView{AppProject: *p, Digest: p.Digest()}
}

// ProjectAppsInput asks which running apps belong to a project.
type ProjectAppsInput struct {
	Project string `json:"project"`
}

type ProjectAppsResult struct {
	Apps []string `json:"apps,omitempty"`
}

// ProjectNotFoundError: no project of that name exists.
type ProjectNotFoundError struct{ Name string }

func (e *ProjectNotFoundError) Error() string {
	return fmt.Sprintf("project %q not found: create it with ferry project apply -f FILE, or see ferry project list", e.Name)
}

// ActivityProjectPermissions tells whether the app's project still permits
// its source repositories and destinations (control worker, run as a local
// activity).
const ActivityProjectPermissions = "ProjectPermissions"

// ProjectPermissionsInput names the app's project, repositories and
// destinations.
type ProjectPermissionsInput struct {
	App          string            `json:"app"`
	Project      string            `json:"project"`
	Repos        []string          `json:"repos,omitempty"`
	Destinations []app.Destination `json:"destinations,omitempty"`
}

// ProjectPermissionsResult holds the messages of Argo CD's InvalidSpecError
// conditions; none when the project permits the app.
type ProjectPermissionsResult struct {
	InvalidSpec []string `json:"invalidSpec,omitempty"`
}
