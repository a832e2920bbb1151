package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/customize"
	"github.com/ferry-gitops/ferry/internal/orphans"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

// `ferry app resources` lists the app's resources, and with its project's
// orphanedResources the objects of its destination namespaces that no app
// tracks, as argocd app resources does. Orphans are read through the
// user's kubeconfig, one context per region: no object passes through a
// workflow.

type resourcesFlags struct {
	kubeconfig, customizations string
	regions                    []string
	orphaned                   bool
}

func newResourcesCmd(tf *temporalFlags) *cobra.Command {
	f := &resourcesFlags{}
	cmd := &cobra.Command{
		Use:   "resources NAME [--orphaned]",
		Short: "List the app's resources, and the orphaned resources of its namespaces",
		Long: `List the app's resources per region, as argocd app resources does. When the
app's AppProject has spec.orphanedResources, the objects of the app's
destination namespace that no app tracks are listed too, with ORPHANED yes:
top-level objects (no owner references) of any namespaced kind the project
allows, but the default ServiceAccount, the kubernetes Service,
kube-root-ca.crt, what orphanedResources.ignore names and the kinds
resource.exclusions/inclusions leave alone (--resource-customizations). With
--orphaned, only those; --orphaned=false, only the app's own. With
orphanedResources.warn (the default), an app that has orphans gets Argo CD's
OrphanedResourceWarning, printed after the list. Each region is read
through the kubeconfig context named after it.

Once you are logged in (ferry login), the list is the app's own resources
as ferry-server shows the app; orphaned resources are not offered through
the server yet (--orphaned is refused: ferry logout, operators only).`,
		Example: `  ferry app resources guestbook
  ferry app resources guestbook --orphaned --region us-east-1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mode := listAll
			if cmd.Flags().Changed("orphaned") {
				mode = listManaged
				if f.orphaned {
					mode = listOrphaned
				}
			}
			return throughDoor(func() error {
				return runResources(cmd.Context(), tf, f, args[0], mode, cmd.OutOrStdout(), cmd.ErrOrStderr())
			},
				func(a *api) error { return doorResources(cmd, a, f, args[0], mode) })
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.orphaned, "orphaned", false, "only the orphaned resources (=false: only the app's own)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig with one context per region (default $KUBECONFIG)")
	fl.StringSliceVar(&f.regions, "region", nil, "only these regions (default: every destination)")
	fl.StringVar(&f.customizations, "resource-customizations", os.Getenv("FERRY_RESOURCE_CUSTOMIZATIONS"),
		"Argo CD's argocd-cm ConfigMap manifest `FILE` whose resource.exclusions/inclusions apply (default $FERRY_RESOURCE_CUSTOMIZATIONS)")
	return cmd
}

type resourcesMode int

const (
	listAll resourcesMode = iota
	listManaged
	listOrphaned
)

func runResources(ctx context.Context, tf *temporalFlags, f *resourcesFlags, name string, mode resourcesMode, out, errOut io.Writer) error {
	set, err := customize.ParseFile(f.customizations)
	if err != nil {
		return err
	}
	c, err := tf.dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := queryApp(ctx, c, name)
	if err != nil {
		return err
	}
	if invalid := invalidSpec(v.Status.Conditions); len(invalid) > 0 {
		// The app's project no longer permits it: Argo CD empties its
		// resource tree, managed and orphaned, until it does again.
		tw := resourcesTable(out)
		printInvalid(errOut, invalid)
		return tw.Flush()
	}
	var proj *contract.ProjectView
	if mode != listManaged {
		if proj, err = ferryclient.GetProject(ctx, c, v.ProjectOf()); err != nil {
			return projectError(v.ProjectOf(), "query", err)
		}
		if proj.Spec.OrphanedResources == nil && mode == listOrphaned {
			return fmt.Errorf("app %q: project %q does not monitor orphaned resources: set spec.orphanedResources (e.g. {warn: false}) in AppProject %s and apply it with ferry project apply",
				name, proj.Metadata.Name, proj.Metadata.Name)
		}
	}
	var running map[string]bool
	if proj != nil && proj.Spec.OrphanedResources != nil {
		if running, err = runningApps(ctx, c); err != nil {
			return err
		}
	}
	tw := resourcesTable(out)
	rs := &regionlive.Regions{Kubeconfig: f.kubeconfig}
	var errs, warnings []error
	for _, d := range v.Destinations(knownRegions()) {
		if len(f.regions) > 0 && !contains(f.regions, d.Region) {
			continue
		}
		if mode != listOrphaned {
			printManaged(tw, v.Status.Resources, d.Region)
		}
		var managed []app.ResourceKey
		for _, r := range v.Status.Resources {
			if r.Region == d.Region && r.Kind != app.Kind {
				managed = append(managed, r.ResourceKey)
			}
		}
		if proj == nil || proj.Spec.OrphanedResources == nil {
			continue
		}
		found, err := findOrphans(ctx, rs, d.Region, orphans.Request{
			App: name, Namespace: d.Namespace, Managed: managed, Project: &proj.AppProject,
			Running:  func(n string) bool { return running[n] },
			Excluded: func(group, kind string) bool { return set.Excluded(group, kind, d.Region) },
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("app %q: orphaned resources in region %s: %w", name, d.Region, err))
		}
		for _, k := range found {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\tYes\n", d.Region, k.Group, k.Kind, k.Namespace, k.Name)
		}
		if len(found) > 0 && proj.Spec.OrphanedResources.IsWarn() {
			warnings = append(warnings, fmt.Errorf("%s: %s (region %s, namespace %s)",
				app.ConditionOrphanedResourceWarning, app.OrphanWarning(len(found)), d.Region, d.Namespace))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(errOut, w)
	}
	return errors.Join(errs...)
}

// findOrphans reads region through the kubeconfig context named after it.
func findOrphans(ctx context.Context, rs *regionlive.Regions, region string, req orphans.Request) ([]app.ResourceKey, error) {
	r, err := openRegion(rs, region)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return orphans.Find(ctx, orphans.Clients{Discovery: r.Client.Discovery(), Dynamic: r.Cluster.Dynamic()}, req)
}

// runningApps are the names of the running apps.
func runningApps(ctx context.Context, c client.Client) (map[string]bool, error) {
	out := map[string]bool{}
	err := ferryclient.ListApps(ctx, c, func(name string, _ contract.Summary) { out[name] = true })
	return out, err
}

// printManaged writes the rows of the app's own resources in region.
func printManaged(tw io.Writer, resources []app.ResourceStatus, region string) {
	for _, r := range resources {
		if r.Region == region && r.Kind != app.Kind {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\tNo\n", region, r.Group, r.Kind, r.Namespace, r.Name)
		}
	}
}

func printInvalid(errOut io.Writer, invalid []app.Condition) {
	for _, cond := range invalid {
		fmt.Fprintf(errOut, "%s: %s\n", cond.Type, cond.Message)
	}
}

// invalidSpec are the app's InvalidSpecError conditions.
func invalidSpec(conds []app.Condition) []app.Condition {
	var out []app.Condition
	for _, c := range conds {
		if c.Type == app.ConditionInvalidSpecError {
			out = append(out, c)
		}
	}
	return out
}
