package main

import (
	"fmt"
	"io"

	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/workflows"
)

func newListCmd(tf *temporalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the apps with their sync and health",
		Args:  cobra.NoArgs,
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, _ []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSYNC\tHEALTH\tREVISION\tREGIONS\tREPO")
			err := workflows.ListApps(cmd.Context(), c, func(name string, s workflows.Summary) {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, orDefault(s.Sync, "Unknown"),
					orDefault(s.Health, "Unknown"), short(s.Revision), strings.Join(s.Regions, ","), s.RepoURL)
			})
			if err != nil {
				return err
			}
			return tw.Flush()
		}),
	}
}

func newWaitCmd(tf *temporalFlags) *cobra.Command {
	var sync, health bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until the app is Synced (--sync) and/or Healthy (--health)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !sync && !health {
				sync, health = true, true
			}
			c, err := tf.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			deadline := time.Now().Add(timeout)
			for {
				v, err := queryApp(cmd.Context(), c, args[0])
				if err != nil {
					return err
				}
				s := v.Status
				if (!sync || s.Sync.Status == app.SyncStatusSynced) && (!health || s.Health.Status == app.HealthHealthy) {
					fmt.Fprintf(cmd.OutOrStdout(), "app %q: %s, %s at %s\n", args[0], s.Sync.Status, s.Health.Status, short(s.Sync.Revision))
					return nil
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("app %q: still %s, %s after %s", args[0], s.Sync.Status, s.Health.Status, timeout)
				}
				select {
				case <-cmd.Context().Done():
					return cmd.Context().Err()
				case <-time.After(500 * time.Millisecond):
				}
			}
		},
	}
	cmd.Flags().BoolVar(&sync, "sync", false, "wait for Synced")
	cmd.Flags().BoolVar(&health, "health", false, "wait for Healthy")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long")
	return cmd
}

func readAll(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read application from stdin: %w", err)
	}
	return data, nil
}
