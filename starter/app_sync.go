package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

func newSyncCmd(tf *temporalFlags) *cobra.Command {
	var req contract.SyncRequest
	var wait bool
	var sf syncFlags
	var many appSelection
	var local localFlags
	cmd := &cobra.Command{
		Use:   "sync [NAME... | -l SELECTOR | --project PROJECT]",
		Short: "Sync the app to its target revision (or --revision) in every region",
		Long: `Sync apps to their target revision (or --revision) in every region. Name
the apps, or select them as argocd app sync does: -l SELECTOR by their
labels (as ferry app list -l) and --project, repeatable; every app that
matches is synced in turn, by name, and a failure does not stop the
others.`,
		Example: `  ferry app sync guestbook --wait
  ferry app sync guestbook --local ./guestbook --wait   # uncommitted manifests
  ferry app sync -l team=payments --prune
  ferry app sync --project shop --project web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			label := "the apps"
			if len(args) == 1 {
				label = args[0]
			}
			if err := sf.apply(cmd, label, &req); err != nil {
				return err
			}
			names := args
			switch {
			case many.set() && len(args) > 0:
				return fmt.Errorf("give app names or -l/--project, not both: %s", strings.Join(args, ", "))
			case many.set():
				var err error
				if names, err = many.names(cmd.Context(), tf); err != nil {
					return err
				}
				if len(names) == 0 {
					return fmt.Errorf("no app matches -l %q --project %q: see ferry app list -l", many.selector, strings.Join(many.projects, ","))
				}
			case len(args) == 0:
				return errors.New("name the apps to sync, or select them with -l SELECTOR or --project PROJECT")
			}
			if err := local.prepareLocal(cmd.Context(), tf, names, &req, cmd.OutOrStdout()); err != nil { // app_sync_local.go
				return err
			}
			if sf.timeout > 0 {
				wait = true
				ctx, cancel := context.WithTimeoutCause(cmd.Context(), sf.timeout,
					fmt.Errorf("%s: timed out after %s waiting for the sync (it goes on: ferry app get NAME; ferry app terminate-op NAME stops it)",
						label, sf.timeout))
				defer cancel()
				cmd.SetContext(ctx)
			}
			return syncMany(cmd, names, func(name string) error { return runSync(cmd, tf, name, req, wait) })
		},
	}
	many.register(cmd)
	sf.register(cmd)
	local.register(cmd)
	cmd.Flags().StringVar(&req.Revision, "revision", "", "branch, tag or SHA to sync instead of the target revision")
	cmd.Flags().BoolVar(&req.Prune, "prune", false, "delete tracked resources that are no longer in Git")
	cmd.Flags().BoolVar(&req.DryRun, "dry-run", false, "apply with the API server's dry-run: nothing changes")
	cmd.Flags().BoolVar(&wait, "wait", false, "print progress until the operation ends; exit non-zero when it fails")
	return cmd
}

// runSync sends the sync update. Without wait it returns once the workflow
// accepted it; with wait it prints progress and fails when the operation does.
func runSync(cmd *cobra.Command, tf *temporalFlags, name string, req contract.SyncRequest, wait bool) error {
	ctx := cmd.Context()
	if a, err := door(); err != nil || a != nil {
		if err != nil {
			return err
		}
		return doorSync(ctx, a, cmd.OutOrStdout(), name, req, wait)
	}
	c, err := tf.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := checkSyncWindows(ctx, c, name); err != nil {
		return err
	}
	stage := client.WorkflowUpdateStageAccepted
	if wait {
		stage = client.WorkflowUpdateStageCompleted
	}
	out := cmd.OutOrStdout()
	progress, stopProgress := context.WithCancel(ctx)
	defer stopProgress()
	if wait {
		go printProgress(progress, c, name, out)
	}
	if req.InitiatedBy == nil {
		req.InitiatedBy = &app.InitiatedBy{Username: cliIdentity()}
	}
	handle, err := ferryclient.Sync(ctx, c, name, req, stage)
	if err != nil {
		return appError(name, "sync", err)
	}
	sayHowSent(ctx, c, name, out)
	if !wait {
		fmt.Fprintf(out, "sync of %q started: follow it with ferry app get %s\n", name, name)
		return nil
	}
	var op app.OperationState
	if err := handle.Get(ctx, &op); err != nil {
		return appError(name, "sync", err)
	}
	if operationRunning(&op) {
		// The operation went on in the workflow's next run (continue-as-new
		// between retries): the update answered it running.
		if op, err = followOperation(ctx, c, name, op.ID); err != nil {
			return err
		}
	}
	stopProgress()
	fmt.Fprintf(out, "operation %s: %s: %s (%s)\n", op.ID, op.Phase, op.Message, operationSource(&op))
	printResults(out, op.Results)
	if op.Phase != app.OperationSucceeded {
		return fmt.Errorf("app %q: sync %s: %s", name, op.Phase, op.Message)
	}
	return nil
}

// operationSource is what an operation synced: a revision, or local
// manifests.
func operationSource(op *app.OperationState) string {
	if op.Local != "" {
		return localLabel(op.Local)
	}
	return "revision " + short(op.Revision)
}

// sayHowSent says, of an app that an Application object owns, that the
// sync went to its workflow as an update, and not through the object's
// operation field (kubectl sees it in the object's status all the same).
func sayHowSent(ctx context.Context, c client.Client, name string, out io.Writer) {
	if v, err := queryApp(ctx, c, name); err == nil && v.Owner != nil && v.Owner.Object != "" {
		fmt.Fprintf(out, "app %q is Application object %s's: the sync was sent to its workflow as an update, not set in the object's operation field; the object's status.operationState shows it\n",
			name, v.Owner.Object)
	}
}

// followOperation polls the app until its operation with the ID ends.
func followOperation(ctx context.Context, c client.Client, name, id string) (app.OperationState, error) {
	for {
		v, err := queryApp(ctx, c, name)
		switch {
		case ferryclient.IsAppNotFound(err): // deleted meanwhile
			return app.OperationState{}, err
		case err != nil:
			// A query the workflow did not answer in time (a busy worker,
			// the run changing): ask again.
			if ctx.Err() != nil {
				return app.OperationState{}, err
			}
			time.Sleep(time.Second)
			continue
		}
		op := v.Status.OperationState
		if op == nil || op.ID != id {
			return app.OperationState{}, fmt.Errorf("app %q: operation %s is no longer the app's: see ferry app history %s", name, id, name)
		}
		if !operationRunning(op) {
			return *op, nil
		}
		select {
		case <-ctx.Done():
			return app.OperationState{}, context.Cause(ctx)
		case <-time.After(time.Second):
		}
	}
}

func operationRunning(op *app.OperationState) bool {
	return op.Phase == app.OperationRunning || op.Phase == app.OperationTerminating
}

// printProgress prints the running operation each time it changes.
func printProgress(ctx context.Context, c client.Client, name string, out interface{ Write([]byte) (int, error) }) {
	var last string
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		v, err := queryApp(ctx, c, name)
		if err != nil || v.Status.OperationState == nil || v.Status.OperationState.Phase != app.OperationRunning {
			continue
		}
		op := v.Status.OperationState
		line := fmt.Sprintf("operation %s: %s: %s", op.ID, op.Phase, op.Message)
		if line != last && ctx.Err() == nil {
			fmt.Fprintln(out, line)
			last = line
		}
	}
}

// short shortens a commit SHA, or each of a multi-source app's revisions
// (joined by commas).
func short(sha string) string {
	if strings.Contains(sha, ",") {
		parts := strings.Split(sha, ",")
		for i, p := range parts {
			parts[i] = short(p)
		}
		return strings.Join(parts, ",")
	}
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}

// checkSyncWindows refuses up front a manual sync that the app's sync
// windows deny now (ferryclient.ManualSyncAllowed).
func checkSyncWindows(ctx context.Context, c client.Client, name string) error {
	v, err := queryApp(ctx, c, name)
	if err != nil {
		return err
	}
	return ferryclient.ManualSyncAllowed(ctx, c, v, knownRegions())
}
