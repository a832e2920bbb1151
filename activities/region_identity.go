package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
)

// Who a region worker writes as. With destinationServiceAccounts in the
// app's project, every write of a sync, prune, delete or hook run (and the
// dry runs of a compare) impersonates the ServiceAccount of the first entry
// that matches the app's destination in this region, so that the cluster's
// RBAC is the final word. The destination and the project come from the
// app's workflow and the project's, as for the project check, never from
// the activity's input. The worker's own identity keeps reading and
// watching.

// writer is the Cluster that writes the objects of the app name in this
// region, as its project says.
func (r *Region) writer(name string, a appInRegion) (Cluster, error) {
	p := a.project
	user, err := p.ServiceAccountFor(name, r.Name, a.namespace, r.Regions, r.RequireImpersonation)
	if err == nil && user != "" && !a.deploys {
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
		a, err := r.appProject(ctx, appName)
		if err != nil {
			return "", err
		}
		w, err := r.writer(appName, a)
		if err != nil {
			return "", err
		}
		return w.WriteUser(ctx)
	})
}
