package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/customize"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

// `ferry app actions` runs resource actions on an app's live objects, as
// argocd app actions does: the built-in restart, and the Lua actions of an
// argocd-cm. They run through the user's kubeconfig, as ferry app diff and
// logs read; no object passes through a workflow.

type actionFlags struct {
	kubeconfig, group, kind, name, namespace, customizations string
	regions                                                  []string
}

func newActionsCmd(tf *temporalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "actions", Short: "List and run resource actions (restart, and Lua actions) on the app's objects"}
	cmd.AddCommand(newActionsListCmd(tf), newActionsRunCmd(tf))
	return cmd
}

func (f *actionFlags) register(cmd *cobra.Command, kindRequired bool) {
	f.registerTarget(cmd, kindRequired)
	cmd.Flags().StringVar(&f.customizations, "resource-customizations", os.Getenv("FERRY_RESOURCE_CUSTOMIZATIONS"),
		"Argo CD's argocd-cm ConfigMap manifest `FILE` with resource.customizations.actions (default $FERRY_RESOURCE_CUSTOMIZATIONS)")
}

// registerTarget registers the flags that name one of the app's objects
// and the regions.
func (f *actionFlags) registerTarget(cmd *cobra.Command, kindRequired bool) {
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig with one context per region (default $KUBECONFIG)")
	fl.StringVar(&f.group, "group", "", "API group of the resource (default: any)")
	fl.StringVar(&f.kind, "kind", "", "kind of the resource, e.g. Deployment")
	fl.StringVar(&f.name, "resource-name", "", "name of the resource")
	fl.StringVar(&f.namespace, "namespace", "", "namespace of the resource (default: any)")
	fl.StringSliceVar(&f.regions, "region", nil, "only these regions (default: every destination)")
	if kindRequired {
		_ = cmd.MarkFlagRequired("kind")
		_ = cmd.MarkFlagRequired("resource-name")
	}
}

func newActionsRunCmd(tf *temporalFlags) *cobra.Command {
	f := &actionFlags{}
	var params []string
	cmd := &cobra.Command{
		Use:   "run NAME ACTION --kind KIND --resource-name NAME",
		Short: "Run an action on one of the app's objects in each region",
		Long: `Run an action on one of the app's objects, in every region the app deploys
to (or --region), as argocd app actions run does. The built-in restart sets
the pod template's kubectl.kubernetes.io/restartedAt annotation of a
Deployment, StatefulSet or DaemonSet, as kubectl rollout restart does. Other
actions are Lua scripts under resource.customizations.actions.<group_kind> of
an argocd-cm ConfigMap (--resource-customizations); a script's action with the
same name takes the place of the built-in one. Each region is read and
changed through the kubeconfig context named after it.

Once you are logged in (ferry login), the action runs through ferry-server
with your rights (applications action/GROUP/KIND/ACTION), with the Lua
actions of its argocd-cm: --kubeconfig and --resource-customizations are
then refused.`,
		Example: `  ferry app actions run guestbook restart --kind Deployment --resource-name guestbook-ui
  ferry app actions run shop pause --kind Rollout --group argoproj.io --resource-name web --resource-customizations argocd-cm.yaml`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := actionParams(params)
			if err != nil {
				return err
			}
			return throughDoor(func() error { return runAction(cmd.Context(), tf, f, args[0], args[1], p, cmd.OutOrStdout()) },
				func(a *api) error { return doorRunAction(cmd, a, f, args[0], args[1], p) })
		},
	}
	f.register(cmd, true)
	cmd.Flags().StringArrayVar(&params, "param", nil, "KEY=VALUE handed to the Lua action as actionParams; repeatable")
	return cmd
}

func newActionsListCmd(tf *temporalFlags) *cobra.Command {
	f := &actionFlags{}
	cmd := &cobra.Command{
		Use:   "list NAME [--kind KIND] [--resource-name NAME]",
		Short: "List the actions of the app's objects",
		Long: `List the actions of the app's objects that --kind, --resource-name,
--group and --namespace name (default: every object), in each region: the
built-in ones, and with --resource-customizations the Lua actions of an
argocd-cm. Once you are logged in (ferry login), ferry-server lists them,
with the Lua actions of its argocd-cm.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return throughDoor(func() error { return listActions(cmd.Context(), tf, f, args[0], cmd.OutOrStdout()) },
				func(a *api) error { return doorListActions(cmd, a, f, args[0]) })
		},
	}
	f.register(cmd, false)
	return cmd
}

func actionParams(raw []string) (map[string]string, error) {
	out := map[string]string{}
	var errs []error
	for _, kv := range raw {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			errs = append(errs, fmt.Errorf("--param %q: want KEY=VALUE, e.g. --param replicas=3", kv))
			continue
		}
		out[k] = v
	}
	return out, errors.Join(errs...)
}

func (f *actionFlags) selects(k app.ResourceKey) bool {
	return (f.kind == "" || f.kind == k.Kind) && (f.group == "" || f.group == k.Group) &&
		(f.name == "" || f.name == k.Name) && (f.namespace == "" || f.namespace == k.Namespace)
}

func (f *actionFlags) loadCustomizations() (*customize.Set, error) {
	return customize.ParseFile(f.customizations)
}

// regionTargets are the app's resources the flags name, by region.
func (f *actionFlags) regionTargets(ctx context.Context, tf *temporalFlags, name string) ([]string, map[string][]app.ResourceKey, error) {
	c, err := tf.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	v, err := queryApp(ctx, c, name)
	c.Close()
	if err != nil {
		return nil, nil, err
	}
	return f.targetsOf(v, name)
}

// targetsOf are the resources of v the flags name, by region.
func (f *actionFlags) targetsOf(v *contract.View, name string) ([]string, map[string][]app.ResourceKey, error) {
	var order []string
	byRegion := map[string][]app.ResourceKey{}
	for _, d := range v.Destinations(knownRegions()) {
		if len(f.regions) > 0 && !contains(f.regions, d.Region) {
			continue
		}
		order = append(order, d.Region)
		for _, r := range v.Status.Resources {
			if r.Region == d.Region && f.selects(r.ResourceKey) && r.Kind != app.Kind {
				byRegion[d.Region] = append(byRegion[d.Region], r.ResourceKey)
			}
		}
	}
	if len(order) == 0 {
		return nil, nil, fmt.Errorf("app %q does not deploy to region %s: see ferry app get %s", name, strings.Join(f.regions, ", "), name)
	}
	return order, byRegion, nil
}

func runAction(ctx context.Context, tf *temporalFlags, f *actionFlags, name, action string, params map[string]string, out io.Writer) error {
	set, err := f.loadCustomizations()
	if err != nil {
		return err
	}
	return eachTarget(ctx, tf, f, name, func(ctx context.Context, r *regionlive.Region, k app.ResourceKey) error {
		done, err := r.RunAction(ctx, set, k, action, params)
		if err != nil {
			return fmt.Errorf("action %q: %w", action, err)
		}
		printActionDone(out, r.Name, action, k, done)
		return nil
	})
}

// oneTarget is the one object of keys, the app's in region that the flags
// name; none, or more than one, is an error that says what to give.
func (f *actionFlags) oneTarget(name, region string, keys []app.ResourceKey) (app.ResourceKey, error) {
	switch {
	case len(keys) == 0:
		return app.ResourceKey{}, fmt.Errorf("app %q has no %s %s in region %s: see ferry app resources %s", name, f.kind, f.name, region, name)
	case len(keys) > 1:
		var names []string
		for _, k := range keys {
			names = append(names, kindOf(k)+" "+objectName(k))
		}
		return app.ResourceKey{}, fmt.Errorf("app %q: %s %s is ambiguous in region %s (%s): give --group and --namespace",
			name, f.kind, f.name, region, strings.Join(names, ", "))
	}
	return keys[0], nil
}

func printActionDone(out io.Writer, region, action string, k app.ResourceKey, done []string) {
	fmt.Fprintf(out, "%s: action %q on %s %s: %s\n", region, action, kindOf(k), objectName(k), strings.Join(done, ", "))
}

// listActions prints the actions of each object the flags name.
func listActions(ctx context.Context, tf *temporalFlags, f *actionFlags, name string, out io.Writer) error {
	set, err := f.loadCustomizations()
	if err != nil {
		return err
	}
	order, byRegion, err := f.regionTargets(ctx, tf, name)
	if err != nil {
		return err
	}
	tw := actionsTable(out)
	rs := &regionlive.Regions{Kubeconfig: f.kubeconfig}
	var errs []error
	for _, region := range order {
		for _, k := range byRegion[region] {
			// Without Lua actions only the built-in ones are listed,
			// and the region is not read.
			acts := regionlive.BuiltinActions(k)
			if set != nil {
				r, err := openRegion(rs, region)
				if err != nil {
					errs = append(errs, fmt.Errorf("region %s: %w", region, err))
					break
				}
				if acts, err = r.Actions(ctx, set, k); err != nil {
					errs = append(errs, fmt.Errorf("region %s: %s %s: %w", region, kindOf(k), objectName(k), err))
				}
			}
			printActions(tw, region, k, acts)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

func actionsTable(out io.Writer) *tabwriter.Writer {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REGION\tGROUP\tKIND\tNAMESPACE\tNAME\tACTION\tDISABLED")
	return tw
}

func printActions(tw io.Writer, region string, k app.ResourceKey, acts []customize.Action) {
	for _, a := range acts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%t\n", region, k.Group, k.Kind, k.Namespace, k.Name, a.Name, a.Disabled)
	}
}
