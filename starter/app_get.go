package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

func newGetCmd(tf *temporalFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show an app: its sync and health, per region and per resource",
		Args:  cobra.ExactArgs(1),
		RunE: tf.runOnApp(func(cmd *cobra.Command, v *contract.View) error {
			return printView(cmd.OutOrStdout(), v, output)
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml; default: tables")
	return cmd
}

func printView(out io.Writer, v *contract.View, output string) error {
	if done, err := printStructured(out, v, output); done {
		return err
	}
	s := v.Status
	if v.IsMultiSource() {
		fmt.Fprintf(out, "Name:          %s\n", v.Metadata.Name)
		printSources(out, v)
	} else {
		src := v.Spec.Source
		fmt.Fprintf(out, "Name:          %s\nRepo:          %s\nPath:          %s\nTarget:        %s\n",
			v.Metadata.Name, src.RepoURL, src.Path, orDefault(src.TargetRevision, "HEAD"))
	}
	if v.Owner != nil {
		fmt.Fprintf(out, "Owner:         %s\n", v.Owner)
	}
	for _, info := range v.Spec.Info {
		fmt.Fprintf(out, "Info:          %s: %s\n", info.Name, info.Value)
	}
	fmt.Fprintf(out, "Sync Status:   %s (%s)\nHealth Status: %s\n", s.Sync.Status, short(s.Sync.Revision), s.Health.Status)
	if s.ReconciledAt != nil {
		fmt.Fprintf(out, "Reconciled:    %s\n", s.ReconciledAt.Format(time.RFC3339))
	}
	if op := s.OperationState; op != nil {
		fmt.Fprintf(out, "Operation:     %s %s: %s\n", op.ID, op.Phase, op.Message)
		if op.Local != "" {
			fmt.Fprintf(out, "Sync Source:   %s (ferry app sync --local)\n", localLabel(op.Local))
		}
		if o := op.Operation; o != nil {
			for _, info := range o.Info {
				fmt.Fprintf(out, "Sync Info:     %s: %s\n", info.Name, info.Value)
			}
			if o.InitiatedBy != nil {
				fmt.Fprintf(out, "Initiated By:  %s\n", o.InitiatedBy)
			}
		}
		if ps := op.PostSync; ps != nil {
			fmt.Fprintf(out, "PostSync:      %s %s: %s\n", ps.WorkflowID, ps.Phase, ps.Message)
		}
	}
	if sw := s.SyncWindow; sw != nil {
		fmt.Fprintf(out, "Sync Window:   automated sync of %s held: %s\n", short(sw.Revision),
			strings.TrimPrefix(sw.Message, fmt.Sprintf("app %q: ", v.Metadata.Name)))
	}
	if ro := s.Rollout; ro != nil {
		fmt.Fprintf(out, "Rollout:       stage %d/%d %s: %s\n", ro.Stage, ro.Stages, ro.Phase, ro.Message)
	}
	for _, c := range s.Conditions {
		fmt.Fprintf(out, "Condition:     %s: %s\n", c.Type, c.Message)
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REGION\tSYNC\tHEALTH\tREVISION\tDEPLOYED\tRESOURCES\tMESSAGE")
	for _, region := range v.Regions(knownRegions()) {
		r := s.Regions[region]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", region, orDefault(string(r.Sync), "Unknown"),
			orDefault(string(r.Health), "Unknown"), short(r.Revision), orDefault(short(r.SyncedRevision), "-"), r.Resources, r.Message)
	}
	_ = tw.Flush()
	if len(s.Resources) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	fmt.Fprintln(tw, "REGION\tGROUP\tKIND\tNAMESPACE\tNAME\tSTATUS\tHEALTH\tMESSAGE")
	for _, r := range s.Resources {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Region, r.Group, r.Kind, r.Namespace, r.Name, r.Status, r.Health, resourceMessage(r))
	}
	return tw.Flush()
}

// resourceMessage says why a resource is not Healthy (its health message)
// and how it compares.
func resourceMessage(r app.ResourceStatus) string {
	why := r.HealthMessage
	if r.Health == app.HealthHealthy {
		why = ""
	}
	switch {
	case why == "":
		return r.Message
	case r.Message == "":
		return why
	}
	return why + "; " + r.Message
}

func printResults(out io.Writer, results []app.ResourceResult) {
	if len(results) == 0 {
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REGION\tKIND\tNAMESPACE\tNAME\tRESULT\tMESSAGE")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Region, r.Kind, r.Namespace, r.Name, r.Action, r.Message)
	}
	_ = tw.Flush()
}

func newHistoryCmd(tf *temporalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "history NAME",
		Short: "List the app's last deployments (IDs for ferry app rollback)",
		Args:  cobra.ExactArgs(1),
		RunE: tf.runOnApp(func(cmd *cobra.Command, v *contract.View) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tDATE\tREVISION")
			for _, h := range v.Status.History {
				rev := h.Revision
				if h.Local != "" {
					rev = localLabel(h.Local)
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\n", h.ID, h.DeployedAt.Format(time.RFC3339), rev)
			}
			return tw.Flush()
		}),
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
