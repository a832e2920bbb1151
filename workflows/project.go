package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// maxProjectUpdates bounds the spec updates of one run before it continues
// as new: each costs a handful of events.
const maxProjectUpdates = 500

type projectState struct {
	project  app.AppProject
	updates  int
	deleting bool
	deleted  bool
}

// AppProject is the workflow of one project: it holds the spec, answers
// QueryProject, takes new specs through UpdateProjectSpec (validated before
// they are accepted) and ends on UpdateProjectDelete once no app uses it.
func (w *Workflows) AppProject(ctx workflow.Context, raw json.RawMessage) error {
	p, err := parseProject(raw)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "InvalidAppProject", nil)
	}
	s := &projectState{project: *p}
	if err := s.registerHandlers(ctx); err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return s.deleted || s.updates >= maxProjectUpdates }); err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	if s.deleted {
		return nil
	}
	return workflow.NewContinueAsNewError(ctx, contract.ProjectWorkflow, s.project)
}

// parseProject reads a project as strictly as `ferry project apply` does.
func parseProject(raw json.RawMessage) (*app.AppProject, error) {
	p, err := app.ParseProject(raw)
	if err != nil {
		return nil, err
	}
	if err := app.ValidateProject(p); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *projectState) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, contract.QueryProject, func() (contract.ProjectView, error) {
		return contract.ViewOfProject(&s.project), nil
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateProjectSpec, s.handleSpec,
		workflow.UpdateHandlerOptions{Validator: s.validateSpec}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateProjectDelete, s.handleDelete,
		workflow.UpdateHandlerOptions{Validator: s.validateDelete})
}

func (s *projectState) errDeleting() error {
	return fmt.Errorf("project %q is being deleted: wait for the delete to finish", s.project.Metadata.Name)
}

func (s *projectState) validateSpec(ctx workflow.Context, raw json.RawMessage) error {
	if s.deleting || s.deleted {
		return s.errDeleting()
	}
	next, err := parseProject(raw)
	if err != nil {
		return err
	}
	if next.Metadata.Name != s.project.Metadata.Name {
		return fmt.Errorf("project %q: the spec update names project %q: a project cannot be renamed; apply it as a new project",
			s.project.Metadata.Name, next.Metadata.Name)
	}
	return nil
}

func (s *projectState) handleSpec(ctx workflow.Context, raw json.RawMessage) (contract.ProjectView, error) {
	next, err := parseProject(raw) // a replay runs no validator
	if err != nil {
		return contract.ProjectView{}, err
	}
	s.project = *next
	s.updates++
	return contract.ViewOfProject(&s.project), nil
}

func (s *projectState) validateDelete(ctx workflow.Context) error {
	if s.deleting || s.deleted {
		return s.errDeleting()
	}
	return nil
}

// handleDelete ends the project unless an app uses it: the apps are listed
// by an activity, since a workflow cannot look at other workflows itself.
// The default project's object ends whatever apps use it: they fall back
// to the built-in default project. No history of a project named default
// predates this (the name was refused), so the path needs no version.
func (s *projectState) handleDelete(ctx workflow.Context) error {
	s.deleting = true
	defer func() { s.deleting = false }()
	name := s.project.Metadata.Name
	if name == app.DefaultProject {
		s.deleted = true
		return nil
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3},
		Summary:             "apps of project " + name,
	})
	var res contract.ProjectAppsResult
	if err := workflow.ExecuteActivity(actx, contract.ActivityProjectApps, contract.ProjectAppsInput{Project: name}).Get(ctx, &res); err != nil {
		return fmt.Errorf("project %q: list its apps: %w", name, err)
	}
	if n := len(res.Apps); n > 0 {
		return fmt.Errorf("project %q is used by %d app(s): %s: delete them, or move them to another project (spec.project), first",
			name, n, strings.Join(res.Apps, ", "))
	}
	s.deleted = true
	return nil
}
