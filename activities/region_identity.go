package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// Who a region worker writes as. With destinationServiceAccounts in the
// app's project, every write of a sync, prune, delete or hook run (and the
// dry runs of a compare) impersonates the ServiceAccount of the first entry
// that matches the app's destination in this region, so that the cluster's
// RBAC is the final word. The destination and the project come from the
// app's workflow and the project's, as for the project check, never from
// the activity's input. The worker's own identity keeps reading and
// watching.

// writer is the Cluster that writes a's objects in this region, as p says.
func (r *Region) writer(a *app.Application, p *app.AppProject) (Cluster, error) {
	name := a.Metadata.Name
	namespace, found := "", false
	for _, d := range a.Destinations(r.Regions) {
		if d.Region == r.Name {
			namespace, found = d.Namespace, true
			break
		}
	}
	user, err := p.ServiceAccountFor(name, r.Name, namespace, r.Regions, r.RequireImpersonation)
	if err == nil && user != "" && !found {
		err = fmt.Errorf("app %q does not deploy to region %s, so its project names no service account to write there as", name, r.Name)
	}
	if err == nil && user != "" {
		err = r.Impersonable.Check(user, name, p.Metadata.Name, r.Name)
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%v: nothing of this sync was applied in region %s", err, r.Name),
			contract.ErrProjectDenied, nil)
	}
	if user == "" {
		return r.Cluster, nil
	}
	return r.Cluster.AsResolved(func(context.Context) (string, error) { return user, nil }), nil
}

// writerOf is writer for work that sends no rendered objects to check
// (a delete): the app and its project are read on the first write only.
func (r *Region) writerOf(appName string) Cluster {
	if r.Projects == nil {
		return r.Cluster
	}
	return r.Cluster.AsResolved(func(ctx context.Context) (string, error) {
		a, p, err := r.Projects.AppProject(ctx, appName)
		if err != nil {
			return "", err
		}
		w, err := r.writer(a, p)
		if err != nil {
			return "", err
		}
		return w.WriteUser(ctx)
	})
}
