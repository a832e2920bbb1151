package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// syncFlags are argocd app sync's flags for a selective sync, its apply
// and its retries.
type syncFlags struct {
	resources, labels         []string
	force, outOfSyncOnly      bool
	retryLimit, retryFactor   int64
	retryDuration, retryMaxDu string
	timeout                   time.Duration
	info                      []string
}

func (f *syncFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringArrayVar(&f.resources, "resource", nil, "sync only this resource, as GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME (globs; a leading ! excludes); repeatable")
	fl.StringArrayVar(&f.labels, "label", nil, "sync only resources with this label, key=value; repeatable")
	fl.BoolVar(&f.force, "force", false, "use a force apply (Force=true)")
	fl.BoolVar(&f.outOfSyncOnly, "apply-out-of-sync-only", false, "apply only the resources that are OutOfSync")
	fl.Int64Var(&f.retryLimit, "retry-limit", 0, "retry a failed sync this many times (-1: for ever); replaces spec.syncPolicy.retry for this sync")
	fl.StringVar(&f.retryDuration, "retry-backoff-duration", "5s", "the first retry's delay (a duration, or bare seconds)")
	fl.StringVar(&f.retryMaxDu, "retry-backoff-max-duration", "3m", "the longest delay between retries")
	fl.Int64Var(&f.retryFactor, "retry-backoff-factor", app.DefaultBackoffFactor, "the delay is multiplied by this after each retry")
	fl.StringArrayVar(&f.info, "info", nil, "keep name=value on the operation (status.operationState.operation.info), as argocd app sync --info; repeatable")
	fl.DurationVar(&f.timeout, "timeout", 0, "wait at most this long for the sync to end (implies --wait; the sync goes on after)")
}

// apply puts the flags into the request, refusing every bad one at once.
func (f *syncFlags) apply(cmd *cobra.Command, name string, req *contract.SyncRequest) error {
	var errs []error
	for _, s := range f.resources {
		r, err := app.ParseSyncResource(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("--resource: %w", err))
			continue
		}
		req.Resources = append(req.Resources, r)
	}
	req.Labels = f.labels
	if err := (app.Selection{Labels: f.labels}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("--label: %w", err))
	}
	req.Force, req.ApplyOutOfSyncOnly = f.force, f.outOfSyncOnly
	if f.retryLimit != 0 || cmd.Flags().Changed("retry-backoff-duration") || cmd.Flags().Changed("retry-backoff-max-duration") || cmd.Flags().Changed("retry-backoff-factor") {
		if f.retryLimit == 0 {
			errs = append(errs, errors.New("--retry-backoff-*: give --retry-limit N (or -1 for ever) too"))
		}
		factor := f.retryFactor
		req.Retry = &app.RetryPolicy{Limit: f.retryLimit, Backoff: &app.Backoff{Duration: f.retryDuration, MaxDuration: f.retryMaxDu, Factor: &factor}}
		if err := req.Retry.Validate("--retry"); err != nil {
			errs = append(errs, err)
		}
	}
	info, err := app.ParseOperationInfo(f.info)
	if err != nil {
		errs = append(errs, fmt.Errorf("--info: %w", err))
	}
	req.Info = info
	if f.timeout < 0 {
		errs = append(errs, errors.New("--timeout "+strconv.Quote(f.timeout.String())+": want a positive duration"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("app %q: %w", name, err)
	}
	return nil
}
