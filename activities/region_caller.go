package activities

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// What a region's checks need of an app: its project, and the namespace
// it deploys to in the region. A region never takes them from a caller it
// cannot name: a Temporal client can schedule a Sync on a region queue
// directly. When the activity was scheduled by the app's own workflow,
// Temporal's server names that workflow to the worker (activity.GetInfo:
// its ID and type), and the project and namespace in the input are the
// ones the workflow would answer to a query. Otherwise (a PostSync hook
// run, a history from before the input carried the project) the region
// asks the app's workflow, whose answer waits for a workflow-task slot:
// under a fleet's load that query timed out until the sync failed.

// appClaim is an app's project and namespace as its own workflow put them
// in the activity's input; the project's rules are read once an activity.
type appClaim struct {
	app, project, namespace string

	once sync.Once
	p    *app.AppProject
	err  error
}

type appClaimKey struct{}

// claimed notes the app's project and namespace of the input in ctx when
// the activity's caller is the app's own workflow. An input without a
// project (recorded before it carried one) notes nothing.
func claimed(ctx context.Context, appName, project, namespace string) context.Context {
	if project == "" || !calledByApp(ctx, appName) {
		return ctx
	}
	return context.WithValue(ctx, appClaimKey{}, &appClaim{app: appName, project: project, namespace: namespace})
}

// calledByApp: the activity was scheduled by the running workflow of the
// app, as Temporal's server tells the worker.
func calledByApp(ctx context.Context, appName string) bool {
	if !activity.IsActivity(ctx) {
		return false
	}
	info := activity.GetInfo(ctx)
	return info.WorkflowType != nil && info.WorkflowType.Name == contract.ApplicationWorkflow &&
		info.WorkflowExecution.ID == contract.WorkflowID(appName)
}

// appInRegion is an app's project and its namespace in this region;
// deploys is false where the app has no destination in the region.
type appInRegion struct {
	project   *app.AppProject
	namespace string
	deploys   bool
}

// appProject reads the app's project (and namespace here) from the claim
// its workflow made in ctx, else from the app's workflow.
func (r *Region) appProject(ctx context.Context, appName string) (appInRegion, error) {
	if c, ok := ctx.Value(appClaimKey{}).(*appClaim); ok && c.app == appName {
		c.once.Do(func() { c.p, c.err = r.claimedProject(ctx, c) })
		return appInRegion{project: c.p, namespace: c.namespace, deploys: true}, c.err
	}
	a, p, err := r.Projects.AppProject(ctx, appName)
	if err != nil {
		return appInRegion{}, err
	}
	for _, d := range a.Destinations(r.Regions) {
		if d.Region == r.Name {
			return appInRegion{project: p, namespace: d.Namespace, deploys: true}, nil
		}
	}
	return appInRegion{project: p}, nil
}

// claimedProject reads the project the claim names; one that does not
// exist permits nothing, for good.
func (r *Region) claimedProject(ctx context.Context, c *appClaim) (*app.AppProject, error) {
	p, err := r.Projects.Project(ctx, c.project)
	var nf *contract.ProjectNotFoundError
	if errors.As(err, &nf) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("app %q: %v", c.app, nf), contract.ErrProjectDenied, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("app %q: %w", c.app, err)
	}
	return p, nil
}
