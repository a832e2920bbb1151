package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// SyncWindows reads the app's project from its workflow and decides what
// its sync windows say at the time the workflow gives: the workflow
// computes nothing from the clock itself.
func (p *Projects) SyncWindows(ctx context.Context, in contract.SyncWindowsInput) (contract.SyncWindowsResult, error) {
	v, err := getProject(ctx, p.Client, p.Cache, in.Project)
	var nf *contract.ProjectNotFoundError
	if errors.As(err, &nf) {
		return contract.SyncWindowsResult{}, temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrProjectNotFound, nil)
	}
	if err != nil {
		return contract.SyncWindowsResult{}, err
	}
	return contract.SyncWindowsResult{WindowDecision: v.SyncAllowed(in.Subject, in.Now, in.Manual)}, nil
}

// ProjectPermissions reads the app's project and lists, in Argo CD's
// words, the repositories and destinations of the app it does not permit,
// and, for an app of another namespace, that namespace when the project's
// sourceNamespaces do not list it.
func (p *Projects) ProjectPermissions(ctx context.Context, in contract.ProjectPermissionsInput) (contract.ProjectPermissionsResult, error) {
	v, err := getProject(ctx, p.Client, p.Cache, in.Project)
	var nf *contract.ProjectNotFoundError
	if errors.As(err, &nf) {
		return contract.ProjectPermissionsResult{}, temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrProjectNotFound, nil)
	}
	if err != nil {
		return contract.ProjectPermissionsResult{}, err
	}
	conds := v.PermissionConditions(in.Repos, in.Destinations, p.Regions)
	if ns, name := app.SplitName(in.App); ns != "" {
		if err := v.CheckSourceNamespace(name, ns); err != nil {
			conds = append([]string{err.Error()}, conds...)
		}
	}
	return contract.ProjectPermissionsResult{InvalidSpec: conds}, nil
}
