package main

import (
	"fmt"

	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
)

func newConfirmCmd(tf *temporalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "confirm NAME",
		Short: "Let the app's running sync prune, or its delete delete, what Prune=confirm or Delete=confirm holds back",
		Long: `Confirm what the app waits for, as Argo CD's deletion-approved annotation does:
a running sync whose prune waits because a resource is marked
argocd.argoproj.io/sync-options: Prune=confirm prunes, and a cascading delete
held back by a resource marked Delete=confirm deletes. ferry app get shows
what the app waits for (the operation's message, or the DeletionPending
condition). A confirmation counts for the running operation only.`,
		Args: cobra.ExactArgs(1),
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, args []string) error {
			out, err := ferryclient.Confirm(cmd.Context(), c, args[0])
			if err != nil {
				return appError(args[0], "confirm", err)
			}
			if out.Operation != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "application %q: operation %s confirmed: its prunes go on\n", args[0], out.Operation)
			}
			if out.Deletion {
				fmt.Fprintf(cmd.OutOrStdout(), "application %q: deletion confirmed\n", args[0])
			}
			return nil
		}),
	}
}
