package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/workflows"
)

// SyncWindows reads the app's project from its workflow and decides what
// its sync windows say at the time the workflow gives: the workflow
// computes nothing from the clock itself.
func (p *Projects) SyncWindows(ctx context.Context, in workflows.SyncWindowsInput) (workflows.SyncWindowsResult, error) {
	v, err := workflows.GetProject(ctx, p.Client, in.Project)
	var nf *workflows.ProjectNotFoundError
	if errors.As(err, &nf) {
		return workflows.SyncWindowsResult{}, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrProjectNotFound, nil)
	}
	if err != nil {
		return workflows.SyncWindowsResult{}, err
	}
	return workflows.SyncWindowsResult{WindowDecision: v.SyncAllowed(in.Subject, in.Now, in.Manual)}, nil
}

// ProjectPermissions reads the app's project and lists, in Argo CD's
// words, the repositories and destinations of the app it does not permit.
func (p *Projects) ProjectPermissions(ctx context.Context, in workflows.ProjectPermissionsInput) (workflows.ProjectPermissionsResult, error) {
	v, err := workflows.GetProject(ctx, p.Client, in.Project)
	var nf *workflows.ProjectNotFoundError
	if errors.As(err, &nf) {
		return workflows.ProjectPermissionsResult{}, temporal.NewNonRetryableApplicationError(err.Error(), workflows.ErrProjectNotFound, nil)
	}
	if err != nil {
		return workflows.ProjectPermissionsResult{}, err
	}
	return workflows.ProjectPermissionsResult{InvalidSpec: v.PermissionConditions(in.Repos, in.Destinations, p.Regions)}, nil
}
