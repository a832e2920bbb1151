package workflows

import (
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// validateSyncOptions refuses a malformed selection or retry policy of a
// sync request, naming every problem at once.
func (s *appState) validateSyncOptions(req contract.SyncRequest) error {
	var errs []error
	for i, r := range req.Resources {
		if r.Kind == "" || r.Name == "" {
			errs = append(errs, fmt.Errorf("sync request resources[%d] %q: want GROUP:KIND:NAME (kind and name given)", i, r.String()))
		}
	}
	if err := (app.Selection{Labels: req.Labels}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("sync request labels: %w", err))
	}
	if err := req.Retry.Validate("sync request retry"); err != nil {
		errs = append(errs, err)
	}
	if err := app.ValidateOperationInfo(req.Info); err != nil {
		errs = append(errs, fmt.Errorf("sync request %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("app %q: %w", s.app.Metadata.Name, err)
	}
	return nil
}

// requestParams are the operation's parameters a sync request gives.
func requestParams(ctx workflow.Context, req contract.SyncRequest) syncParams {
	p := syncParams{prune: req.Prune, dryRun: req.DryRun}
	if len(req.Resources) == 0 && len(req.Labels) == 0 && !req.Force && !req.ApplyOutOfSyncOnly && req.Retry == nil {
		return p
	}
	if len(req.Resources) > 0 || len(req.Labels) > 0 {
		p.selection = &app.Selection{Resources: req.Resources, Labels: req.Labels}
	}
	if req.Force {
		p.options = append(p.options, "Force=true")
	}
	if req.ApplyOutOfSyncOnly {
		p.options = append(p.options, "ApplyOutOfSyncOnly=true")
	}
	p.retry = req.Retry
	return p
}

// selective reports whether the operation syncs part of the app.
func (p syncParams) selective() bool { return p.selection != nil }

// syncOptions are the app's sync options and those the operation adds.
func (s *appState) syncOptions(p syncParams) []string {
	if len(p.options) == 0 {
		return s.appSyncOptions()
	}
	return slices.Concat(s.appSyncOptions(), p.options)
}

// retryPolicy is the operation's: the request's, else spec.syncPolicy.retry.
func (s *appState) retryPolicy(p syncParams) *app.RetryPolicy {
	if p.retry != nil {
		return p.retry
	}
	return s.app.Retry()
}
