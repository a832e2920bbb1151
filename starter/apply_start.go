package main

import (
	"context"
	"fmt"
	"io"

	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// applier is how `ferry app apply` applies one app. With the regions known
// here (so that an app is validated as a worker validates it) and a worker
// polling, a new app is started at once (ferryclient.StartNew: one request,
// no worker round trip) and only an app that runs already gets its spec
// through the spec update (ferryclient.Apply), which waits for its worker.
// Otherwise every app goes through ferryclient.Apply, which says so when no
// worker polls.
func applier(ctx context.Context, c client.Client, opts app.ValidateOptions, by contract.SpecRequest, stderr io.Writer) applyFunc {
	update := func(ctx context.Context, a *app.Application) error {
		_, err := ferryclient.Apply(ctx, c, a, by)
		return err
	}
	if opts.Regions == nil {
		return update
	}
	polling, err := ferryclient.WorkerPolling(ctx, c, contract.OnboardTaskQueue)
	if err != nil {
		fmt.Fprintf(stderr, "ferry: cannot look for the workers of task queue %s (%v): every app waits for its worker\n", contract.OnboardTaskQueue, err)
	}
	if !polling {
		return update
	}
	return func(ctx context.Context, a *app.Application) error {
		started, err := ferryclient.StartNew(ctx, c, a, by)
		if err != nil || started {
			return err
		}
		return update(ctx, a)
	}
}
