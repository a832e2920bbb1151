package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/internal/appsetgit"
	"github.com/ferry-gitops/ferry/internal/gitsource"
)

// AppSets runs the generators of ApplicationSets and drives the apps they
// generate, as apps of their own, through the Temporal client.
type AppSets struct {
	Client client.Client
	Repos  *gitsource.Repos
	// Clusters are the regions, as the clusters generator yields them at
	// the moment it runs (cluster Secrets come and go); nil: none.
	Clusters func() []appset.Cluster
	// Validate checks each generated Application as ferry app apply does.
	Validate app.ValidateOptions
	// SCM reaches the providers of the pullRequest and scmProvider
	// generators; nil: those generators fail, saying so.
	SCM appset.SCM
	// Control reads the control namespace for the clusterDecisionResource
	// and plugin generators; nil: no control namespace.
	Control appset.Control
}

// Register adds the ApplicationSet activities to a worker of the control queue.
func (a *AppSets) Register(w worker.Registry) {
	w.RegisterActivityWithOptions(a.GenerateAppSet, activity.RegisterOptions{Name: contract.ActivityGenerateAppSet})
	w.RegisterActivityWithOptions(a.ReconcileAppSet, activity.RegisterOptions{Name: contract.ActivityReconcileAppSet})
	w.RegisterActivityWithOptions(a.SyncAppSetApps, activity.RegisterOptions{Name: contract.ActivitySyncAppSetApps})
}

// GenerateAppSet runs the set's generators and renders its template. A
// generator or template that cannot run is not retried; Git is.
func (a *AppSets) GenerateAppSet(ctx context.Context, in contract.GenerateInput) (contract.GenerateResult, error) {
	defer heartbeatEvery(ctx, heartbeatInterval, "generate")()
	src := &appsetgit.Trees{Repos: a.Repos, Fresh: in.Fresh, MaxAge: in.MaxAge}
	defer src.Release()
	var clusters []appset.Cluster
	if a.Clusters != nil {
		clusters = a.Clusters()
	}
	res, err := appset.Generate(ctx, &in.Set, appset.Options{Source: src, Clusters: clusters, Validate: a.Validate,
		SCM: a.SCM, Control: a.Control})
	switch {
	case err != nil && appsetgit.IsGitError(err):
		return contract.GenerateResult{}, classify(err)
	case err != nil && appset.IsSCMError(err):
		// Not retried here: the set says why at once, keeps its apps,
		// and lists again at its next poll or refresh, as Argo CD's.
		return contract.GenerateResult{}, temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrSCMProvider, nil)
	case err != nil:
		return contract.GenerateResult{}, temporal.NewNonRetryableApplicationError(err.Error(), contract.ErrInvalidAppSet, nil)
	}
	apps, refused, err := a.inProject(ctx, &in.Set, res.Apps)
	if err != nil {
		return contract.GenerateResult{}, err
	}
	var revisions []contract.RepoRevision
	for _, r := range src.Revisions() {
		revisions = append(revisions, contract.RepoRevision{RepoURL: r.RepoURL, Revision: r.Revision, SHA: r.SHA})
	}
	return contract.GenerateResult{Apps: apps, Invalid: append(res.Invalid, refused...), Revisions: revisions}, nil
}

// inProject keeps the generated apps that the set's project allows it to
// create (appset.ApplicationSet.Project); each other is refused, as an
// invalid generated app is: never created or changed, and while there is
// one the set deletes none.
func (a *AppSets) inProject(ctx context.Context, set *appset.ApplicationSet, gen []app.Application) (kept []app.Application, refused []string, err error) {
	if len(gen) == 0 {
		return gen, nil, nil
	}
	check, err := projectCheck(ctx, a.Client, fmt.Sprintf("applicationset %q", set.Metadata.Name), set.Project())
	if err != nil {
		return nil, nil, err
	}
	for i := range gen {
		if err := check(&gen[i]); err != nil {
			refused = append(refused, err.Error())
			continue
		}
		kept = append(kept, gen[i])
	}
	return kept, refused, nil
}

// ReconcileAppSet makes the set's apps what it generated, as its policy
// allows: it creates the missing ones, updates those whose spec differs,
// and deletes those it owns that are no longer generated (cascading unless
// the set preserves resources). An app of another owner is never touched:
// it is reported as refused. Each step is idempotent, so that an attempt
// cut short by a crash is finished by the next: every app exists once.
func (a *AppSets) ReconcileAppSet(ctx context.Context, in contract.ReconcileInput) (contract.ReconcileResult, error) {
	defer heartbeatEvery(ctx, heartbeatInterval, "reconcile")()
	var out contract.ReconcileResult
	generated := map[string]bool{}
	if !in.DeleteAll {
		for i := range in.Apps {
			generated[in.Apps[i].Metadata.Name] = true
			row, owned, err := a.apply(ctx, in, &in.Apps[i])
			if err != nil {
				return out, err
			}
			out.Apps = append(out.Apps, row)
			if owned {
				out.Owned = append(out.Owned, row.Name)
			}
		}
	}
	release := in.DeleteAll && in.Policy != "" && !appset.PolicyDeletes(in.Policy)
	for _, name := range in.Previous {
		if generated[name] {
			continue
		}
		if release {
			row, err := a.release(ctx, in, name)
			if err != nil {
				return out, err
			}
			out.Apps = append(out.Apps, row)
			if row.Action == contract.AppFailed {
				out.Owned = append(out.Owned, name)
			}
			continue
		}
		if in.NoDelete {
			out.Apps = append(out.Apps, contract.AppSetApp{Name: name, Action: contract.AppKept,
				Message: "no longer generated; kept, as spec.syncPolicy.applicationsSync (or an invalid generated app) allows no delete"})
			out.Owned = append(out.Owned, name)
			continue
		}
		row, err := a.delete(ctx, in, name)
		if err != nil {
			return out, err
		}
		out.Apps = append(out.Apps, row)
		if row.Action == contract.AppFailed {
			out.Owned = append(out.Owned, name)
		}
	}
	return out, nil
}

// apply creates or updates one generated app; owned tells whether it is
// the set's afterwards. An error is one another attempt may fix.
func (a *AppSets) apply(ctx context.Context, in contract.ReconcileInput, gen *app.Application) (contract.AppSetApp, bool, error) {
	name := gen.Metadata.Name
	row := contract.AppSetApp{Name: name}
	by := contract.SpecRequest{AppSet: in.Set, Created: slices.Contains(in.Previous, name)}
	v, err := runningApp(ctx, a.Client, name)
	switch {
	case isNotFound(err):
		row.Action = contract.AppCreated
	case err != nil:
		return row, false, fmt.Errorf("applicationset %q: query app %q: %w", in.Set, name, err)
	default:
		if err := contract.CheckOwner(name, v.Owner, by); err != nil {
			row.Action, row.Message = contract.AppRefused, contract.ErrorMessage(err)
			return row, false, nil
		}
		observe(&row, v)
		if gen, err = appset.KeepIgnored(in.Ignore, &v.Application, gen); err != nil {
			row.Action, row.Message = contract.AppFailed, fmt.Sprintf("app %q: %v", name, err)
			return row, true, nil
		}
		gen = appset.KeepPreserved(in.Preserved, &v.Application, gen)
		switch {
		case !appset.Differs(&v.Application, gen):
			row.Action = contract.AppUnchanged
			return row, true, nil
		case in.Policy == appset.PolicyCreateOnly || in.Policy == appset.PolicyCreateDelete:
			row.Action, row.Message = contract.AppKept, "the generated spec differs; not updated, as applicationsSync is "+in.Policy
			return row, true, nil
		}
		row.Action = contract.AppUpdated
	}
	nv, err := ferryclient.Apply(ctx, a.Client, gen, by)
	switch {
	case contract.IsOwnerRefusal(err):
		// Claimed by someone else between the query and the apply.
		row.Action, row.Message = contract.AppRefused, contract.ErrorMessage(err)
		return row, false, nil
	case err != nil && app.IsValidationError(err), err != nil && isNonRetryable(err):
		row.Action, row.Message = contract.AppFailed, fmt.Sprintf("app %q: %s", name, contract.ErrorMessage(err))
		return row, by.Created, nil
	case err != nil:
		return row, false, fmt.Errorf("applicationset %q: apply app %q: %w", in.Set, name, err)
	}
	observe(&row, &nv)
	return row, true, nil
}

// delete deletes one app the set owns and no longer generates.
func (a *AppSets) delete(ctx context.Context, in contract.ReconcileInput, name string) (contract.AppSetApp, error) {
	row := contract.AppSetApp{Name: name, Action: contract.AppDeleted}
	if _, err := runningApp(ctx, a.Client, name); isNotFound(err) {
		return row, nil
	} else if err != nil {
		return row, fmt.Errorf("applicationset %q: query app %q: %w", in.Set, name, err)
	}
	cascade := !in.Preserve
	err := ferryclient.Delete(ctx, a.Client, name, contract.DeleteRequest{AppSet: in.Set, Cascade: &cascade})
	switch {
	case err == nil, isNotFound(err):
		return row, nil
	case contract.IsOwnerRefusal(err):
		// Adopted by a user meanwhile: no longer the set's.
		row.Action, row.Message = contract.AppRefused, contract.ErrorMessage(err)
		return row, nil
	case isNonRetryable(err):
		row.Action, row.Message = contract.AppFailed, fmt.Sprintf("delete app %q: %s", name, contract.ErrorMessage(err))
		return row, nil
	}
	return row, fmt.Errorf("applicationset %q: delete app %q: %w", in.Set, name, err)
}

// release hands one app of a set being deleted, whose policy deletes no
// app, over to the users: the app stays as it is, no longer the set's, as
// Argo CD's controller drops the set's owner reference so that the
// garbage collector leaves the app alone. An app that is gone or belongs
// to another owner is left alone.
func (a *AppSets) release(ctx context.Context, in contract.ReconcileInput, name string) (contract.AppSetApp, error) {
	row := contract.AppSetApp{Name: name, Action: contract.AppReleased}
	v, err := runningApp(ctx, a.Client, name)
	switch {
	case isNotFound(err):
		return row, nil
	case err != nil:
		return row, fmt.Errorf("applicationset %q: query app %q: %w", in.Set, name, err)
	case v.Owner != nil && *v.Owner != (contract.Owner{AppSet: in.Set}):
		return row, nil
	}
	_, err = ferryclient.Apply(ctx, a.Client, &v.Application, contract.SpecRequest{ForceAdopt: true})
	switch {
	case err == nil:
		return row, nil
	case isNonRetryable(err), app.IsValidationError(err):
		row.Action, row.Message = contract.AppFailed, fmt.Sprintf("release app %q: %s", name, contract.ErrorMessage(err))
		return row, nil
	}
	return row, fmt.Errorf("applicationset %q: release app %q: %w", in.Set, name, err)
}

func isNonRetryable(err error) bool {
	var ae *temporal.ApplicationError
	return errors.As(err, &ae) && ae.NonRetryable()
}
