package ferryclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
)

// projects are the AppProject workflows.
var projects = objectWorkflow{Type: contract.ProjectWorkflow, IDPrefix: contract.ProjectWorkflowID(""), Noun: "projects"}

// ApplyProject creates the project's workflow, or sends a running one the
// new spec, in one update-with-start; the update's validator refuses a bad
// spec before anything changes. A project named default replaces the
// built-in default project until it is deleted.
func ApplyProject(ctx context.Context, c client.Client, p *app.AppProject) (contract.ProjectView, error) {
	var v contract.ProjectView
	err := projects.applyWithStart(ctx, c, p.Metadata.Name, "AppProject "+p.Metadata.Name, nil, p, contract.UpdateProjectSpec, []any{p}, &v)
	return v, err
}

// GetProject answers the project query. The default project (name empty
// or default) is the applied AppProject object of that name, or else the
// built-in one, which allows everything.
func GetProject(ctx context.Context, c client.Client, name string) (*contract.ProjectView, error) {
	if name == "" {
		name = app.DefaultProject
	}
	var v contract.ProjectView
	switch err := projects.query(ctx, c, name, contract.QueryProject, &v); {
	case errors.Is(err, errNotRunning):
		return notRunningProject(name)
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

// ListProjects returns the names of the projects, default first (built in,
// or applied), then the running project workflows in name order.
func ListProjects(ctx context.Context, c client.Client) ([]string, error) {
	var names []string
	err := projects.listRunning(ctx, c, func(name string, _ *workflowpb.WorkflowExecutionInfo) {
		if name != app.DefaultProject {
			names = append(names, name)
		}
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	return append([]string{app.DefaultProject}, slices.Compact(names)...), nil
}

// DeleteProject deletes a project through its delete update, which refuses
// while apps use it. Deleting the default project's AppProject object
// restores the built-in default project, whatever apps use it; the
// built-in one cannot be deleted.
func DeleteProject(ctx context.Context, c client.Client, name string) error {
	err := projects.update(ctx, c, name, contract.UpdateProjectDelete)
	switch {
	case errors.Is(err, errNotRunning) && name == app.DefaultProject:
		return fmt.Errorf("project %q is built in (no AppProject object named %s is applied) and cannot be deleted", app.DefaultProject, app.DefaultProject)
	case errors.Is(err, errNotRunning):
		return &contract.ProjectNotFoundError{Name: name}
	}
	return err
}

// AppsOfProject lists the running apps whose spec.project is project (an
// empty spec.project is the default project), by asking each app.
func AppsOfProject(ctx context.Context, c client.Client, project string) ([]string, error) {
	var names []string
	if err := ListApps(ctx, c, func(name string, _ contract.Summary) { names = append(names, name) }); err != nil {
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
// allow its repository or destinations, or, for an app of another
// namespace (team-a/web), that namespace (sourceNamespaces); the built-in default project allows
// all, an applied default object what it says. The region workers check
// the objects themselves again before a sync. rc nil: the regions are not
// known here (app.AppProject.CheckApplication says what is left to the
// workers then).
func CheckAppProject(ctx context.Context, c client.Client, a *app.Application, rc *regions.Config) error {
	name := a.ProjectOf()
	v, err := GetProject(ctx, c, name)
	var nf *contract.ProjectNotFoundError
	if errors.As(err, &nf) {
		return fmt.Errorf("app %q: %w", a.Metadata.Name, err)
	}
	if err != nil {
		return fmt.Errorf("app %q: read project %q: %w", a.Metadata.Name, name, err)
	}
	if ns, objName := app.SplitName(a.Metadata.Name); ns != "" {
		if err := v.CheckSourceNamespace(objName, ns); err != nil {
			return err // every project, the built-in default's included: none lists a namespace unless told
		}
	}
	if v.IsBuiltIn() {
		return nil
	}
	return v.CheckApplication(a, rc)
}
