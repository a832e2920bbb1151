package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// defaultApplyParallel is how many applies `ferry app apply` has in flight
// at once: enough to hide the round trips to Temporal, few enough that a
// fleet does not flood one dev server with workflow starts.
const defaultApplyParallel = 8

// applyFunc applies one Application: ferryclient.Apply on a client.
type applyFunc func(ctx context.Context, a *app.Application) error

// applyFailedError says how many of the apps failed; each one's error went
// to stderr as it came.
type applyFailedError struct {
	failed []string // app names, in input order
	total  int
}

func (e *applyFailedError) Error() string {
	names := strings.Join(e.failed[:min(len(e.failed), maxFailedNames)], ", ")
	if more := len(e.failed) - maxFailedNames; more > 0 {
		names += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("%d of %d applications failed (%s); the others are applied: fix the cause and run the same command again (apply is idempotent)",
		len(e.failed), e.total, names)
}

// maxFailedNames bounds the names in the summary; every failure's own error
// is on stderr above it.
const maxFailedNames = 10

// applyAll applies the inputs, up to parallel at a time, and reports each
// one in input order as soon as it and those before it are done: the usual
// line on stdout, or its error on stderr. With one input its error is
// returned as it is; with more, the failures are summed up in an
// *applyFailedError. Apps that were applied stay applied.
func applyAll(ctx context.Context, inputs []applyInput, parallel int, apply applyFunc, stdout, stderr io.Writer) error {
	errs := make([]error, len(inputs))
	done := make([]chan struct{}, len(inputs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(parallel, len(inputs)) {
		wg.Go(func() {
			for i := range next {
				a := inputs[i].app
				if err := apply(ctx, a); err != nil {
					errs[i] = appError(a.Metadata.Name, "apply", err)
				}
				close(done[i])
			}
		})
	}
	go func() {
		for i := range inputs {
			next <- i
		}
		close(next)
	}()

	var failed []string
	for i, in := range inputs {
		<-done[i]
		name := in.app.Metadata.Name
		if errs[i] != nil {
			failed = append(failed, name)
			if len(inputs) > 1 {
				fmt.Fprintln(stderr, "ferry:", errs[i])
			}
			continue
		}
		fmt.Fprintf(stdout, "application %q applied (workflow %s)\n", name, contract.WorkflowID(name))
	}
	wg.Wait()
	switch {
	case len(failed) == 0:
		return nil
	case len(inputs) == 1:
		return errs[0]
	}
	return &applyFailedError{failed: failed, total: len(inputs)}
}
