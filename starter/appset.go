package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/appset"
)

func newAppSetCmd() *cobra.Command {
	tf := &temporalFlags{}
	cmd := &cobra.Command{Use: "appset", Short: "Create, inspect, refresh and delete ApplicationSets: apps generated from lists, regions and Git"}
	tf.register(cmd)
	cmd.AddCommand(newAppSetApplyCmd(tf), newAppSetGetCmd(tf), newAppSetListCmd(tf), newAppSetRefreshCmd(tf), newAppSetDeleteCmd(tf),
		newAppSetTakeoverCmd(), newAppSetGenerateCmd())
	return cmd
}

func newAppSetApplyCmd(tf *temporalFlags) *cobra.Command {
	return appSets.applyCmd(tf, `Create ApplicationSets (Argo CD's argoproj.io/v1alpha1 ApplicationSet), or
update their specs: one ApplicationSet per file. -f takes a file, - for
stdin, or a directory (its *.yaml, *.yml and *.json files). Every file is
read and validated first, every problem named; if any is wrong, nothing is
applied. A set's workflow then generates its apps and keeps them as its
generators say; it never changes an app it did not create.`, `  ferry appset apply -f team-apps.yaml
  ferry appset apply -f appsets/`)
}

// appSets is the ApplicationSet kind of ferry appset.
var appSets = objectKind[*appset.ApplicationSet]{
	objectFiles: objectFiles[*appset.ApplicationSet]{
		noun:  "applicationset",
		parse: appset.Read,
		name:  func(s *appset.ApplicationSet) string { return s.Metadata.Name },
	},
	kind: "ApplicationSet",
	apply: func(ctx context.Context, c client.Client, s *appset.ApplicationSet) error {
		_, err := ferryclient.ApplyAppSet(ctx, c, s)
		return err
	},
	fail: appSetError,
}

// collectAppSets reads and validates every ApplicationSet -f names before
// anything is applied, and lists every bad file at once.
func collectAppSets(values []string, stdin io.Reader) ([]*appset.ApplicationSet, error) {
	return appSets.collect(values, stdin)
}

func newAppSetGetCmd(tf *temporalFlags) *cobra.Command {
	return getCmd(appSets, tf, "Show a set: its conditions and generated apps with their sync and health", "tables",
		ferryclient.GetAppSet, printAppSet)
}

func printAppSet(out io.Writer, v *contract.AppSetView, output string) error {
	if done, err := printStructured(out, v, output); done {
		return err
	}
	fmt.Fprintf(out, "Name:          %s\nPolicy:        %s\n", v.Metadata.Name, v.Policy())
	if v.RollingSync() {
		fmt.Fprintf(out, "Strategy:      %s (%d steps)\n", appset.StrategyRollingSync, len(v.Spec.Strategy.RollingSync.Steps))
	}
	for _, r := range v.Status.Revisions {
		fmt.Fprintf(out, "Revision:      %s %s (%s)\n", r.RepoURL, r.Revision, short(r.SHA))
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nCONDITION\tSTATUS\tMESSAGE")
	for _, c := range v.Status.Conditions {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Type, c.Status, c.Message)
	}
	fmt.Fprintln(tw, "\nAPP\tSYNC\tHEALTH\tMESSAGE")
	for _, r := range v.Status.Resources {
		health := ""
		if r.Health != nil {
			health = string(r.Health.Status)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Status, health, r.Message)
	}
	if len(v.Status.ApplicationStatus) > 0 {
		// As Argo CD's status.applicationStatus: each app's progress in the
		// RollingSync.
		fmt.Fprintln(tw, "\nAPPLICATION\tSTEP\tSTATUS\tLAST TRANSITION\tMESSAGE")
		for _, st := range v.Status.ApplicationStatus {
			when := ""
			if st.LastTransitionTime != nil {
				when = st.LastTransitionTime.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", st.Application, st.Step, st.Status, when, st.Message)
		}
	}
	return tw.Flush()
}

func newAppSetListCmd(tf *temporalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the ApplicationSets with their apps and health",
		Args:  cobra.NoArgs,
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, _ []string) error {
			sets, err := ferryclient.ListAppSets(cmd.Context(), c)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tAPPS\tUP-TO-DATE\tREPOS")
			for _, s := range sets {
				v, err := ferryclient.GetAppSet(cmd.Context(), c, s.Name)
				var nf *contract.AppSetNotFoundError
				switch {
				case errors.As(err, &nf):
					continue // deleted meanwhile
				case err != nil:
					return appSetError(s.Name, "query", err)
				}
				upToDate := "Unknown"
				for _, cond := range v.Status.Conditions {
					if cond.Type == contract.AppSetResourcesUpToDate {
						upToDate = cond.Status
					}
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", s.Name, len(v.Status.Resources), upToDate, orNone(strings.Join(s.Repos, ", ")))
			}
			return tw.Flush()
		}),
	}
}

func newAppSetRefreshCmd(tf *temporalFlags) *cobra.Command {
	return appSets.nameCmd(tf, "refresh", "Run a set's generators now, with its repositories' refs listed anew",
		"refresh requested", ferryclient.RefreshAppSet)
}

func newAppSetDeleteCmd(tf *temporalFlags) *cobra.Command {
	return appSets.nameCmd(tf, "delete", "Delete a set and the apps it generated (their resources too, unless preserveResourcesOnDeletion)",
		"deleted", ferryclient.DeleteAppSet)
}

// appSetError turns a Temporal error into one a user can act on.
func appSetError(name, doing string, err error) error {
	return objectError("applicationset", name, doing, err, &contract.AppSetNotFoundError{Name: name}, func(err error) bool {
		var nf *contract.AppSetNotFoundError
		return errors.As(err, &nf)
	})
}
