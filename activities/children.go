package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appobjects"
)

// Children runs the child Applications of an app of apps as apps of their
// own, through the Temporal client: nothing of them is applied to a cluster.
type Children struct {
	Client client.Client
	// Objects, when the control worker has a control cluster, are the
	// children as Application objects there (children_objects.go).
	Objects *appobjects.Children
}

// Register adds the app-of-apps activities to a worker of the control queue.
func (c *Children) Register(w worker.Registry) {
	w.RegisterActivityWithOptions(c.CompareChildren, activity.RegisterOptions{Name: contract.ActivityCompareChildren})
	w.RegisterActivityWithOptions(c.SyncChildren, activity.RegisterOptions{Name: contract.ActivitySyncChildren})
	w.RegisterActivityWithOptions(c.DeleteChildren, activity.RegisterOptions{Name: contract.ActivityDeleteChildren})
}

// childKey names a child Application as a resource of its parent.
func childKey(name, namespace string) app.ResourceKey {
	return app.ResourceKey{Group: "argoproj.io", Version: "v1alpha1", Kind: app.Kind, Namespace: namespace, Name: name}
}

// CompareChildren reports each child as a resource of the parent: Synced
// when its app runs with the spec Git holds, with the child's own health;
// previous children no longer rendered are OutOfSync (a prune deletes them).
func (c *Children) CompareChildren(ctx context.Context, in contract.ChildrenInput) (contract.CompareChildrenResult, error) {
	var out contract.CompareChildrenResult
	check, err := c.checkOf(ctx, in)
	if err != nil {
		return out, err
	}
	for _, child := range in.Children {
		appName, object := c.childApp(in.Parent, child.Metadata.Name)
		ns := child.Metadata.Namespace
		if object != "" {
			ns, _, _ = strings.Cut(object, "/")
		}
		st := app.ResourceStatus{ResourceKey: childKey(child.Metadata.Name, ns),
			Status: app.SyncStatusOutOfSync, Health: app.HealthMissing, Message: "app not created yet"}
		if err := check(&child); err != nil {
			// Not the parent's to create: Degraded until Git or the
			// project changes, whatever runs under that name.
			st.Health, st.Message = app.HealthDegraded, err.Error()
			out.Refused = append(out.Refused, child.Metadata.Name)
			out.Resources = append(out.Resources, st)
			continue
		}
		missing, err := c.childObjectMissing(ctx, in.Parent, child.Metadata.Name)
		switch {
		case contract.IsOwnerRefusal(err):
			st.Health, st.Message = app.HealthDegraded, contract.ErrorMessage(err)
			out.Refused = append(out.Refused, child.Metadata.Name)
			out.Resources = append(out.Resources, st)
			continue
		case err != nil:
			return out, fmt.Errorf("app %q: read the object of child app %q: %w", in.Parent, child.Metadata.Name, err)
		case missing:
			out.Resources = append(out.Resources, st)
			continue
		}
		v, err := c.running(ctx, appName)
		switch {
		case isNotFound(err):
		case err != nil:
			return out, fmt.Errorf("app %q: query child app %q: %w", in.Parent, child.Metadata.Name, err)
		default:
			if err := c.childOwned(in, child.Metadata.Name, v); err != nil {
				// Not ours: Degraded until the parent's Git lets go of it.
				st.Health, st.Message = app.HealthDegraded, contract.ErrorMessage(err)
				out.Refused = append(out.Refused, child.Metadata.Name)
				break
			}
			st.Health, st.Message = v.Status.Health.Status, ""
			if v.SpecDigest() == child.SpecDigest() {
				st.Status = app.SyncStatusSynced
			} else {
				st.Message = "the app's spec differs from Git"
			}
		}
		out.Resources = append(out.Resources, st)
	}
	for _, name := range gone(in) {
		st := app.ResourceStatus{ResourceKey: childKey(name, ""), Status: app.SyncStatusOutOfSync, RequiresPruning: true,
			Message: "no longer in Git: a sync with prune deletes the app"}
		appName, _ := c.childApp(in.Parent, name)
		v, err := c.running(ctx, appName)
		switch {
		case isNotFound(err):
		case err != nil:
			return out, fmt.Errorf("app %q: query child app %q: %w", in.Parent, name, err)
		case v.Application.IgnoresExtraneous():
			// Its own compare-options annotation, as Argo CD reads a
			// managed Application's.
			st.CountsAs = app.SyncStatusSynced
			st.Message += "; not counted in the app's sync status (IgnoreExtraneous)"
		}
		out.Resources = append(out.Resources, st)
	}
	return out, nil
}

// SyncChildren creates or updates each child app (update-with-start of its
// spec) and, with prune, deletes the previous children gone from Git,
// cascading when they carry Argo CD's resources finalizer. A child that
// names an app of another owner is refused by that app, which stays as it
// is, and is no child of this parent: its result names the owner.
func (c *Children) SyncChildren(ctx context.Context, in contract.ChildrenInput) (contract.SyncChildrenResult, error) {
	var out contract.SyncChildrenResult
	check, err := c.checkOf(ctx, in)
	if err != nil {
		return out, err
	}
	var errs []error
	var written []*app.Application
	refused, projectRefused := 0, false
	for _, child := range in.Children {
		key := childKey(child.Metadata.Name, child.Metadata.Namespace)
		result := app.ResourceResult{ResourceKey: key, Action: app.ActionConfigured}
		if err := check(&child); err != nil {
			// Refused before it starts, dry run or not: not a child.
			result.Action, result.Message = app.ActionFailed, err.Error()
			errs = append(errs, fmt.Errorf("app %q: %w", in.Parent, err))
			refused, projectRefused = refused+1, true
			out.Results = append(out.Results, result)
			continue
		}
		if !in.DryRun {
			if err := c.applyChild(ctx, in, &child); err != nil {
				result.Action, result.Message = app.ActionFailed, contract.ErrorMessage(err)
				errs = append(errs, fmt.Errorf("app %q: child app %q: %s", in.Parent, child.Metadata.Name, result.Message))
				if contract.IsOwnerRefusal(err) {
					refused++
					out.Results = append(out.Results, result)
					continue
				}
			} else {
				written = append(written, &child)
			}
		}
		out.Results = append(out.Results, result)
		out.Applied = append(out.Applied, child.Metadata.Name)
	}
	c.awaitChildren(ctx, in, written)
	for _, name := range gone(in) {
		if !in.Prune {
			out.Applied = append(out.Applied, name) // still ours until pruned
			continue
		}
		result := app.ResourceResult{ResourceKey: childKey(name, ""), Action: app.ActionPruned}
		if !in.DryRun {
			err := c.deleteChild(ctx, in.Parent, name)
			if err != nil {
				result.Action, result.Message = app.ActionFailed, contract.ErrorMessage(err)
				errs = append(errs, fmt.Errorf("app %q: delete child app %q: %s", in.Parent, name, result.Message))
				if contract.IsOwnerRefusal(err) {
					refused++ // adopted by another owner: no longer ours
				} else {
					out.Applied = append(out.Applied, name)
				}
			}
		}
		out.Results = append(out.Results, result)
	}
	err = errors.Join(errs...)
	if err != nil && refused == len(errs) {
		// Only refusals: no other attempt changes an owner's or a
		// project's mind.
		typ := contract.ErrAppOwned
		if projectRefused {
			typ = contract.ErrProjectDenied
		}
		return out, temporal.NewNonRetryableApplicationError(err.Error(), typ, nil)
	}
	return out, classify(err)
}

// checkOf is the project check of the parent's children; a parent with
// none to create or update needs no project. The parent's project is the
// input's when the parent's own workflow scheduled the activity
// (region_caller.go), else the parent's workflow is asked.
func (c *Children) checkOf(ctx context.Context, in contract.ChildrenInput) (childCheck, error) {
	if len(in.Children) == 0 {
		return func(*app.Application) error { return nil }, nil
	}
	if in.Project != "" && calledByApp(ctx, in.Parent) {
		return projectCheck(ctx, c.Client, fmt.Sprintf("app of apps %q", in.Parent), in.Project)
	}
	return parentProject(ctx, c.Client, in.Parent)
}

// running queries the app's workflow if it runs; a deleted app's closed
// workflow answers queries still, so it is NotFound here.
func (c *Children) running(ctx context.Context, name string) (*contract.View, error) {
	return runningApp(ctx, c.Client, name)
}

// runningApp queries the app's workflow if it runs; a deleted app's closed
// workflow answers queries still, so it is NotFound here.
func runningApp(ctx context.Context, c client.Client, name string) (*contract.View, error) {
	desc, err := c.DescribeWorkflowExecution(ctx, contract.WorkflowID(name), "")
	if err != nil {
		return nil, err
	}
	if desc.WorkflowExecutionInfo.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil, serviceerror.NewNotFound("app " + name + " is not running")
	}
	return ferryclient.Query(ctx, c, name)
}

func (c *Children) deleteChild(ctx context.Context, parent, name string) error {
	if c.Objects != nil {
		return c.deleteChildObject(ctx, parent, name, false)
	}
	_, err := c.running(ctx, name)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	// Its resources finalizer decides, in its workflow.
	err = ferryclient.Delete(ctx, c.Client, name, contract.DeleteRequest{Parent: parent})
	if isNotFound(err) {
		return nil
	}
	return err
}

// gone are the previous children the parent no longer renders.
func gone(in contract.ChildrenInput) []string {
	var names []string
	for _, name := range in.Previous {
		if !slices.ContainsFunc(in.Children, func(a app.Application) bool { return a.Metadata.Name == name }) {
			names = append(names, name)
		}
	}
	return names
}

// isNotFound: no workflow of that ID, or no running app of that name
// (ferryclient.Query's answer for a deleted one).
func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	var gone *contract.AppNotFoundError
	return errors.As(err, &nf) || errors.As(err, &gone)
}
