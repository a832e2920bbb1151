package main

import (
	"fmt"

	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
)

func newTerminateOpCmd(tf *temporalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "terminate-op NAME",
		Short: "Stop the app's running sync operation",
		Long: `Stop the app's running operation, as argocd app terminate-op does: it turns
Terminating, each region stops before its next task (the running region syncs
are cancelled), no retry follows, and it ends Failed with "Operation
terminated" and the results of what was done. An operation that waits for its
next retry stops at once. The app goes on reconciling; an automated app does
not sync the same revision again until Git or its spec changes.`,
		Args: cobra.ExactArgs(1),
		RunE: tf.runOrDoor(func(cmd *cobra.Command, c client.Client, args []string) error {
			op, err := ferryclient.TerminateOp(cmd.Context(), c, args[0])
			if err != nil {
				return appError(args[0], "terminate-op", err)
			}
			if op != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "application %q: operation %s: %s: %s\n", args[0], op.ID, op.Phase, op.Message)
				printResults(cmd.OutOrStdout(), op.Results)
			}
			return nil
		}, func(cmd *cobra.Command, a *api, args []string) error {
			path, q := appPath(args[0], "/operation")
			if err := a.do(cmd.Context(), "DELETE", path, q, nil, nil); err != nil {
				return fmt.Errorf("app %q: terminate-op: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application %q: operation terminating\n", args[0])
			return nil
		}),
	}
}
