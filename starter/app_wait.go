package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/internal/app"
)

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
