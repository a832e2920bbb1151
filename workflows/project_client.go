package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// projects are the AppProject workflows.
var projects = objectWorkflow{Type: ProjectWorkflow, IDPrefix: ProjectWorkflowID(""), Noun: "projects"}

// ApplyProject creates the project's workflow, or sends a running one the
// new spec, in one update-with-start; the update's validator refuses a bad
// spec before anything changes.
func ApplyProject(ctx context.Context, c client.Client, p *app.AppProject) (ProjectView, error) {
	if p.Metadata.Name == app.DefaultProject {
		return ProjectView{}, fmt.Errorf("project %q is built in and allows everything: give your project another name", app.DefaultProject)
	}
	var v ProjectView
	err := projects.applyWithStart(ctx, c, p.Metadata.Name, "AppProject "+p.Metadata.Name, nil, p, UpdateProjectSpec, []any{p}, &v)
	return v, err
}

// ProjectNotFoundError: no project of that name exists.
type ProjectNotFoundError struct{ Name string }

func (e *ProjectNotFoundError) Error() string {
	return fmt.Sprintf("project %q not found: create it with ferry project apply -f FILE, or see ferry project list", e.Name)
}

// GetProject answers the project query; the default project is built in.
func GetProject(ctx context.Context, c client.Client, name string) (*ProjectView, error) {
	if name == app.DefaultProject || name == "" {
		v := ViewOfProject(app.DefaultAppProject())
		return &v, nil
	}
	var v ProjectView
	switch err := projects.query(ctx, c, name, QueryProject, &v); {
	case errors.Is(err, errNotRunning):
		return nil, &ProjectNotFoundError{Name: name}
	case err != nil:
		return nil, err
	}
	return &v, nil
}

// isNotFound: no workflow of that ID, or only a closed one (a deleted
// project), which cannot answer a query.
func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return true
	}
	var fp *serviceerror.FailedPrecondition
	return errors.As(err, &fp) && strings.Contains(fp.Error(), "completed")
}

// ListProjects returns the names of the projects, default first, then the
// running project workflows in name order.
func ListProjects(ctx context.Context, c client.Client) ([]string, error) {
	var names []string
	err := projects.listRunning(ctx, c, func(name string, _ *workflowpb.WorkflowExecutionInfo) { names = append(names, name) })
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return append([]string{app.DefaultProject}, slices.Compact(names)...), nil
}

// DeleteProject deletes a project through its delete update, which refuses
// while apps use it.
func DeleteProject(ctx context.Context, c client.Client, name string) error {
	if name == app.DefaultProject {
		return fmt.Errorf("project %q is built in and cannot be deleted", app.DefaultProject)
	}
	err := projects.update(ctx, c, name, UpdateProjectDelete)
	if errors.Is(err, errNotRunning) {
		return &ProjectNotFoundError{Name: name}
	}
	return err
}

// AppsOfProject lists the running apps whose spec.project is project (an
// empty spec.project is the default project), by asking each app.
func AppsOfProject(ctx context.Context, c client.Client, project string) ([]string, error) {
	var names []string
	if err := ListApps(ctx, c, func(name string, _ Summary) { names = append(names, name) }); err != nil {
		return nil, err
	}
	var out []string
	for _, name := range names {
		v, err := Query(ctx, c, name)
		switch {
		case err != nil && isNotFound(err):
			continue // deleted meanwhile
		case err != nil:
			return nil, fmt.Errorf("ask app %q for its project: %w", name, err)
		}
		if v.Application.ProjectOf() == project {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// CheckAppProject refuses an app whose project does not exist or does not
// allow its repository or destinations; the default project allows all.
// The region workers check the objects themselves again before a sync.
func CheckAppProject(ctx context.Context, c client.Client, a *app.Application, rc *regions.Config) error {
	name := a.ProjectOf()
	if name == app.DefaultProject {
		return nil
	}
	v, err := GetProject(ctx, c, name)
	var nf *ProjectNotFoundError
	if errors.As(err, &nf) {
		return fmt.Errorf("app %q: %w", a.Metadata.Name, err)
	}
	if err != nil {
		return fmt.Errorf("app %q: read project %q: %w", a.Metadata.Name, name, err)
	}
	return v.CheckApplication(a, rc)
}
