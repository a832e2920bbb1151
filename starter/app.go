package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/workflows"
)

func newAppCmd() *cobra.Command {
	tf := &temporalFlags{}
	cmd := &cobra.Command{Use: "app", Short: "Create, inspect, sync and delete Applications"}
	tf.register(cmd)
	cmd.AddCommand(newApplyCmd(tf), newGetCmd(tf), newListCmd(tf), newSyncCmd(tf), newRefreshCmd(tf),
		newDiffCmd(tf), newHistoryCmd(tf), newRollbackCmd(tf), newDeleteCmd(tf), newWaitCmd(tf))
	return cmd
}

func newApplyCmd(tf *temporalFlags) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create an Application, or update its spec",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := readInput(file)
			if err != nil {
				return err
			}
			a, err := app.Parse(data)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if err := app.Validate(a, validateOptions()); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			c, err := tf.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			name := a.Metadata.Name
			if _, err := workflows.Apply(cmd.Context(), c, a); err != nil {
				return appError(name, "apply", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application %q applied (workflow %s)\n", name, workflows.WorkflowID(name))
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "Application YAML or JSON file, - for stdin")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func readInput(file string) ([]byte, error) {
	if file == "-" {
		return readAll(os.Stdin)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read application: %w", err)
	}
	return data, nil
}

func newRefreshCmd(tf *temporalFlags) *cobra.Command {
	var hard bool
	cmd := &cobra.Command{
		Use:   "refresh NAME",
		Short: "Compare the app with Git and its regions now",
		Args:  cobra.ExactArgs(1),
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, args []string) error {
			err := c.SignalWorkflow(cmd.Context(), workflows.WorkflowID(args[0]), "", workflows.SignalRefresh,
				workflows.RefreshRequest{Hard: hard})
			if err != nil {
				return appError(args[0], "refresh", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "refresh of %q requested\n", args[0])
			return nil
		}),
	}
	cmd.Flags().BoolVar(&hard, "hard", false, "render the manifests again even if the revision has not moved")
	return cmd
}

func newDeleteCmd(tf *temporalFlags) *cobra.Command {
	var cascade bool
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an app; with --cascade, its resources in every region first",
		Args:  cobra.ExactArgs(1),
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, args []string) error {
			if err := workflows.Delete(cmd.Context(), c, args[0], cascade); err != nil {
				return appError(args[0], "delete", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application %q deleted\n", args[0])
			return nil
		}),
	}
	cmd.Flags().BoolVar(&cascade, "cascade", false, "delete the app's resources in every region too")
	return cmd
}

func newRollbackCmd(tf *temporalFlags) *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:   "rollback NAME ID",
		Short: "Sync the revision of a history entry (see ferry app history)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil || id < 0 {
				return fmt.Errorf("rollback ID %q: want a history ID such as 3: see ferry app history %s", args[1], args[0])
			}
			return runSync(cmd, tf, args[0], workflows.SyncRequest{RollbackID: &id}, wait)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", true, "wait until the operation ends")
	return cmd
}
