package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/regions"
)

// Projects answers what a workflow cannot find out itself: which apps use a
// project, and what a project's sync windows say. It reads the apps and
// projects through the Temporal client.
type Projects struct {
	Client client.Client
	// Cache answers for a project's workflow that has not moved since it
	// last did; nil asks the workflow every time.
	Cache *ferryclient.ProjectCache
	// Regions are the workers' regions configuration: how destinations
	// match a project's (aliases, server URLs, in-cluster).
	Regions *regions.Config
}

// Register adds the project activities to a worker of the control queue.
func (p *Projects) Register(w worker.Registry) {
	w.RegisterActivityWithOptions(p.ProjectApps, activity.RegisterOptions{Name: contract.ActivityProjectApps})
	w.RegisterActivityWithOptions(p.SyncWindows, activity.RegisterOptions{Name: contract.ActivitySyncWindows})
	w.RegisterActivityWithOptions(p.ProjectPermissions, activity.RegisterOptions{Name: contract.ActivityProjectPermissions})
}

// ProjectApps lists the running apps whose spec.project names the project.
func (p *Projects) ProjectApps(ctx context.Context, in contract.ProjectAppsInput) (contract.ProjectAppsResult, error) {
	apps, err := ferryclient.AppsOfProject(ctx, p.Client, in.Project)
	return contract.ProjectAppsResult{Apps: apps}, err
}
