package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// ApplyProject creates the project's workflow, or sends a running one the
// new spec, in one update-with-start; the update's validator refuses a bad
// spec before anything changes.
func ApplyProject(ctx context.Context, c client.Client, p *app.AppProject) (ProjectView, error) {
	if p.Metadata.Name == app.DefaultProject {
		return ProjectView{}, fmt.Errorf("project %q is built in and allows everything: give your project another name", app.DefaultProject)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go cancelWithoutWorkers(ctx, c, TaskQueue, cancel)
	start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		StaticSummary:            "AppProject " + p.Metadata.Name,
		ID:                       ProjectWorkflowID(p.Metadata.Name),
		TaskQueue:                TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	}, ProjectWorkflow, p)
	handle, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: start,
		UpdateOptions: client.UpdateWorkflowOptions{
			UpdateName: UpdateProjectSpec, Args: []any{p}, WaitForStage: client.WorkflowUpdateStageCompleted,
		},
	})
	var v ProjectView
	if err == nil {
		err = handle.Get(ctx, &v)
	}
	if noWorker := (*NoWorkerError)(nil); err != nil && errors.As(context.Cause(ctx), &noWorker) {
		return v, noWorker
	}
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
	// A deleted project's workflow has completed; it would still answer
	// from its history, so only a running one may.
	res, err := c.QueryWorkflowWithOptions(ctx, &client.QueryWorkflowWithOptionsRequest{
		WorkflowID: ProjectWorkflowID(name), QueryType: QueryProject,
		QueryRejectCondition: enumspb.QUERY_REJECT_CONDITION_NOT_OPEN,
	})
	switch {
	case err != nil && isNotFound(err), err == nil && res.QueryRejected != nil:
		return nil, &ProjectNotFoundError{Name: name}
	case err != nil:
		return nil, err
	}
	var v ProjectView
	if err := res.QueryResult.Get(&v); err != nil {
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
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:    "WorkflowType = '" + ProjectWorkflow + "' AND ExecutionStatus = 'Running'",
			PageSize: 1000, NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("list the projects: %w", err)
		}
		for _, e := range resp.Executions {
			if name, ok := strings.CutPrefix(e.GetExecution().GetWorkflowId(), ProjectWorkflowID("")); ok {
				names = append(names, name)
			}
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
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
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: ProjectWorkflowID(name), UpdateName: UpdateProjectDelete, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = handle.Get(ctx, nil)
	}
	if err != nil && isNotFound(err) {
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
