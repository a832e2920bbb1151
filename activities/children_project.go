package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// childCheck refuses a child app whose project its parent's project does
// not allow (app.AppProject.CheckChild), before the child is created or
// changed.
type childCheck func(child *app.Application) error

// parentProject is the check of an app of apps' children: the parent's
// project is read from the parent's own workflow, not from the activity's
// input, and its rules from the project's workflow.
func parentProject(ctx context.Context, c client.Client, parent string) (childCheck, error) {
	v, err := runningApp(ctx, c, parent)
	if err != nil {
		return nil, fmt.Errorf("app %q: ask its workflow for its project, which its child apps are checked against: %w", parent, err)
	}
	return projectCheck(ctx, c, fmt.Sprintf("app of apps %q", parent), v.ProjectOf())
}

// projectCheck is the check of the apps that parent, an app of apps or an
// ApplicationSet running under project, creates. A project that does not
// exist allows no child: that does not change with another attempt.
func projectCheck(ctx context.Context, c client.Client, parent, project string) (childCheck, error) {
	pv, err := ferryclient.GetProject(ctx, c, project)
	var nf *contract.ProjectNotFoundError
	if errors.As(err, &nf) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v: no child app is created or changed", parent, err), contract.ErrProjectDenied, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read project %q: %w", parent, project, err)
	}
	return func(child *app.Application) error { return pv.CheckChild(parent, child) }, nil
}

func isChildProjectRefusal(err error) bool {
	var ce *app.ChildProjectError
	return errors.As(err, &ce)
}
