package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// windowRow is one window of `ferry project windows`: as written, and its
// state now.
type windowRow struct {
	Index int `json:"index"`
	app.SyncWindow
	app.WindowState
}

func newProjectWindowsCmd(tf *temporalFlags) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "windows NAME",
		Short: "List a project's sync windows: whether each is active now, and when it next opens and closes",
		Args:  cobra.ExactArgs(1),
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, args []string) error {
			v, err := ferryclient.GetProject(cmd.Context(), c, args[0])
			if err != nil {
				return projectError(args[0], "query", err)
			}
			return printWindows(cmd.OutOrStdout(), &v.AppProject, time.Now(), output)
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml; default: a table")
	return cmd
}

func windowRows(p *app.AppProject, now time.Time) ([]windowRow, error) {
	rows := make([]windowRow, 0, len(p.Spec.SyncWindows))
	for i, w := range p.Spec.SyncWindows {
		st, err := w.StateAt(now)
		if err != nil {
			return nil, fmt.Errorf("project %q: spec.syncWindows[%d]: %w", p.Metadata.Name, i, err)
		}
		rows = append(rows, windowRow{Index: i, SyncWindow: w, WindowState: st})
	}
	return rows, nil
}

func printWindows(out io.Writer, p *app.AppProject, now time.Time, output string) error {
	rows, err := windowRows(p, now)
	if err != nil {
		return err
	}
	if done, err := printStructured(out, rows, output); done {
		return err
	}
	if len(rows) == 0 {
		fmt.Fprintf(out, "project %q has no sync windows: its apps may sync at any time\n", p.Metadata.Name)
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSCHEDULE\tDURATION\tTIMEZONE\tAPPLICATIONS\tNAMESPACES\tCLUSTERS\tMANUALSYNC\tACTIVE\tNEXT OPEN\tNEXT CLOSE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%t\t%t\t%s\t%s\n", r.Index, r.Kind, r.Schedule, r.Duration,
			orDefault(r.TimeZone, "UTC"), orDash(r.Applications), orDash(r.Namespaces), orDash(r.Clusters), r.ManualSync,
			r.Active, timeOrDash(r.NextOpen), timeOrDash(r.NextClose))
	}
	return tw.Flush()
}

func orDash(list []string) string {
	if len(list) == 0 {
		return "-"
	}
	return strings.Join(list, ",")
}

func timeOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
