package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

// listOutputs are the formats of `ferry app list -o`, as argocd app list has them.
var listOutputs = []string{"json", "yaml", "name", "wide"}

// listQueries is how many apps `ferry app list` queries at once when it
// needs more than their search attributes.
const listQueries = 16

func newListCmd(tf *temporalFlags) *cobra.Command {
	var output, selector string
	cmd := &cobra.Command{
		Use:   "list [-o json|yaml|name|wide] [-l SELECTOR]",
		Short: "List the apps with their sync and health",
		Long: `List the running apps, sorted by name.

The default table and -o name come from the apps' search attributes (and the
table's APPSET column, the ApplicationSet that generated the app, from the
sets' listing); -o wide,
json and yaml, and -l, ask each app for its spec and status (json: an array
of the objects ferry app get -o json prints). -l selects apps by their
metadata.labels, with Kubernetes' label selector syntax.`,
		Example: `  ferry app list
  ferry app list -o json | jq -r '.[] | select(.status.health.status != "Healthy") | .metadata.name'
  ferry app list -l team=payments,env!=dev -o name`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && !slices.Contains(listOutputs, output) {
				return fmt.Errorf("unknown output format %q: use one of %s", output, strings.Join(listOutputs, ", "))
			}
			sel, err := labels.Parse(selector)
			if err != nil {
				return fmt.Errorf("--selector %q: %w: write key=value, key!=value, key in (a,b) or key, separated by commas", selector, err)
			}
			if a, err := door(); err != nil || a != nil {
				if err != nil {
					return err
				}
				return doorList(cmd.Context(), a, cmd.OutOrStdout(), output, sel)
			}
			return tf.run(func(cmd *cobra.Command, c client.Client, _ []string) error {
				return listApps(cmd.Context(), c, cmd.OutOrStdout(), output, sel)
			})(cmd, args)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json, yaml, name or wide; default: a table")
	cmd.Flags().StringVarP(&selector, "selector", "l", "", "only apps whose labels match, e.g. team=payments,env!=dev")
	return cmd
}

// listedApp is one running app: its search attributes, and its view when
// the output or the selector needs it.
type listedApp struct {
	name    string
	summary contract.Summary
	view    *contract.View
	// appSet is the ApplicationSet that owns the app, if any.
	appSet string
}

// nameAppSets sets the appSet of each app an ApplicationSet owns, from the
// sets' listing.
func nameAppSets(ctx context.Context, c client.Client, apps []*listedApp) error {
	sets, err := ferryclient.ListAppSets(ctx, c)
	if err != nil {
		return err
	}
	owner := map[string]string{}
	for _, s := range sets {
		for _, a := range s.Owned {
			owner[a] = s.Name
		}
	}
	for _, a := range apps {
		a.appSet = owner[a.name]
	}
	return nil
}

func listApps(ctx context.Context, c client.Client, out io.Writer, output string, sel labels.Selector) error {
	var apps []*listedApp
	err := ferryclient.ListApps(ctx, c, func(name string, s contract.Summary) {
		apps = append(apps, &listedApp{name: name, summary: s})
	})
	if err != nil {
		return err
	}
	slices.SortFunc(apps, func(a, b *listedApp) int { return strings.Compare(a.name, b.name) })
	if output == "" {
		if err := nameAppSets(ctx, c, apps); err != nil {
			return err
		}
	}
	var queryErr error
	if !sel.Empty() || (output != "" && output != "name") {
		apps, queryErr = queryViews(ctx, c, apps)
		apps = slices.DeleteFunc(apps, func(a *listedApp) bool { return !sel.Matches(labels.Set(a.view.Metadata.Labels)) })
	}
	if err := printApps(out, apps, output); err != nil {
		return err
	}
	return queryErr
}

// queryViews asks each app for its view, listQueries at a time. An app
// deleted after the list is left out; one that does not answer is left
// out and named in the error; the others are returned.
func queryViews(ctx context.Context, c client.Client, apps []*listedApp) ([]*listedApp, error) {
	errs := make([]error, len(apps))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(listQueries, len(apps)) {
		wg.Go(func() {
			for i := range next {
				apps[i].view, errs[i] = queryApp(ctx, c, apps[i].name)
				if ferryclient.IsAppNotFound(errs[i]) {
					errs[i] = nil // deleted after the list: gone, as list shows it
				}
			}
		})
	}
	for i := range apps {
		next <- i
	}
	close(next)
	wg.Wait()
	answered := apps[:0]
	for _, a := range apps {
		if a.view != nil {
			answered = append(answered, a)
		}
	}
	return answered, errors.Join(errs...)
}

func printApps(out io.Writer, apps []*listedApp, output string) error {
	switch output {
	case "json", "yaml":
		views := make([]*contract.View, len(apps))
		for i, a := range apps {
			views[i] = a.view
		}
		_, err := printStructured(out, views, output)
		return err
	case "name":
		for _, a := range apps {
			fmt.Fprintln(out, a.name)
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if output == "wide" {
		fmt.Fprintln(tw, "NAME\tSYNC\tHEALTH\tREVISION\tREGIONS\tNAMESPACE\tSYNCPOLICY\tCONDITIONS\tREPO\tPATH\tTARGET")
	} else {
		fmt.Fprintln(tw, "NAME\tSYNC\tHEALTH\tREVISION\tREGIONS\tREPO\tAPPSET")
	}
	for _, a := range apps {
		s := a.summary
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t", a.name, orDefault(s.Sync, "Unknown"),
			orDefault(s.Health, "Unknown"), short(s.Revision), strings.Join(s.Regions, ","))
		if output == "wide" {
			v := a.view
			src := v.Spec.Source
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", orDefault(namespacesOf(v), "-"), syncPolicyOf(&v.Application),
				conditionsOf(v.Status), src.RepoURL, orDefault(src.Path, "."), orDefault(src.TargetRevision, app.DefaultTargetRevision))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\n", s.RepoURL, a.appSet)
	}
	return tw.Flush()
}

// namespacesOf lists the destinations' namespaces, each once.
func namespacesOf(v *contract.View) string {
	var ns []string
	for _, d := range v.Destinations(knownRegions()) {
		if d.Namespace != "" && !slices.Contains(ns, d.Namespace) {
			ns = append(ns, d.Namespace)
		}
	}
	return strings.Join(ns, ",")
}

// syncPolicyOf is the SYNCPOLICY column of argocd app list.
func syncPolicyOf(a *app.Application) string {
	switch {
	case a.AutomatedSync() && a.AutoPrune():
		return "Auto-Prune"
	case a.AutomatedSync():
		return "Auto"
	}
	return "Manual"
}

func conditionsOf(s app.Status) string {
	if len(s.Conditions) == 0 {
		return "<none>"
	}
	types := make([]string, len(s.Conditions))
	for i, c := range s.Conditions {
		types[i] = c.Type
	}
	return strings.Join(types, ",")
}

func readAll(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read application from stdin: %w", err)
	}
	return data, nil
}
