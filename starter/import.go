package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/argoimport"
	"github.com/ferry-gitops/ferry/internal/kube"
)

// fromFlags name the running Argo CD an import reads.
type fromFlags struct {
	context, namespace string
}

func (f *fromFlags) register(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.context, "from-context", "", "kubeconfig context of the cluster Argo CD runs in (default: the current context)")
	pf.StringVar(&f.namespace, "namespace", "argocd", "Argo CD's namespace in the cluster of --from-context")
}

func (f *fromFlags) client() (dynamic.Interface, *rest.Config, error) {
	rc, err := kube.LoadConfig(os.Getenv("KUBECONFIG"), f.context)
	if err != nil {
		return nil, nil, fmt.Errorf("Argo CD's cluster (--from-context %q): %w", f.context, err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	return dyn, rc, err
}

// controlClient is the control cluster --control-context names.
func controlClient(cf *controlFlags) (dynamic.Interface, error) {
	if cf.namespace == "" {
		return nil, errors.New("no control cluster: give --control-namespace (or FERRY_CONTROL_NAMESPACE), where the imported apps go")
	}
	rc, err := kube.LoadConfig(os.Getenv("KUBECONFIG"), cf.context)
	if err != nil {
		return nil, fmt.Errorf("the control cluster (--control-context %q): %w", cf.context, err)
	}
	return dynamic.NewForConfig(rc)
}

func newImportCmd() *cobra.Command {
	var (
		from   fromFlags
		cf     controlFlags
		dryRun bool
		out    string
	)
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Bring a running Argo CD over: its clusters, repositories, settings, projects and apps (in shadow)",
		Long: `Read a running Argo CD (its namespace in the cluster of --from-context) and
bring it over to Ferry:

- its cluster Secrets become OUT/regions.yaml (the workers' --regions-config)
  and OUT/kubeconfig (a context per region, with the clusters' credentials);
- its repository and repo-creds Secrets, argocd-cm, argocd-rbac-cm,
  argocd-notifications-cm, argocd-tls-certs-cm and argocd-notifications-secret
  are copied as they are into the control namespace, where Ferry reads them;
- its AppProjects, ApplicationSets and Applications go into the control
  namespace. Each app runs in shadow: Ferry compares it and reports (ferry
  import report), but does not sync it, because its automated sync policy
  and its finalizers are kept in the annotation ferry.dev/shadow until ferry
  app takeover. An ApplicationSet's template is kept so too, and its apps
  (which Ferry's set generates, not imported one by one) run in shadow
  until ferry appset takeover.

Whatever Ferry cannot carry is listed by object and field; then nothing is
written and it exits non-zero. --dry-run lists the same and writes nothing.`,
		Example: `  ferry import --from-context prod --dry-run
  ferry import --from-context prod --control-context control --control-namespace argocd --out ./ferry-import`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			src, home, err := from.client()
			if err != nil {
				return err
			}
			in, err := argoimport.Read(cmd.Context(), src, from.namespace, home.Host)
			if err != nil {
				return err
			}
			plan := argoimport.MakePlan(in, home, cf.namespace)
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Argo CD in %s: %d Applications, %d AppProjects, %d ApplicationSets, %d clusters, %d repository Secrets, %d settings\n",
				from.namespace, len(in.Applications), len(in.AppProjects), len(in.ApplicationSets), len(in.Clusters), len(in.Repositories), len(in.Settings))
			printRegions(w, plan)
			if len(plan.Problems) > 0 {
				fmt.Fprintf(w, "Ferry cannot carry %d things:\n", len(plan.Problems))
				for _, p := range plan.Problems {
					fmt.Fprintf(w, "  %s\n", p)
				}
				return fmt.Errorf("import: %d things Ferry cannot carry (listed above): nothing was written", len(plan.Problems))
			}
			if dryRun {
				fmt.Fprintln(w, "Everything can be carried. Dry run: nothing was written.")
				return nil
			}
			control, err := controlClient(&cf)
			if err != nil {
				return err
			}
			regionsFile, kubeconfig, err := plan.WriteRegions(out)
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			if err := plan.Write(cmd.Context(), control); err != nil {
				return err
			}
			fmt.Fprintf(w, "Wrote %s and %s, and %d objects into the control namespace %s (%d apps, in shadow).\n",
				regionsFile, kubeconfig, len(plan.Objects), cf.namespace, plan.Apps)
			if plan.Sets > 0 {
				fmt.Fprintf(w, "%d ApplicationSets, in shadow: they generate their %d apps, in shadow too.\n", plan.Sets, plan.Generated)
			}
			fmt.Fprintf(w, "Run the workers with --regions-config %s and KUBECONFIG=%s, see where Ferry and Argo CD differ with\n"+
				"ferry import report, and hand each app over with ferry app takeover NAME (an ApplicationSet's with\n"+
				"ferry appset takeover NAME).\n", regionsFile, kubeconfig)
			return nil
		},
	}
	from.register(cmd)
	cf.register(cmd)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be imported and what cannot be, and write nothing")
	cmd.Flags().StringVar(&out, "out", "ferry-import", "directory for regions.yaml and kubeconfig")
	cmd.AddCommand(newImportReportCmd(&from, &cf))
	return cmd
}

func printRegions(w io.Writer, plan *argoimport.Plan) {
	for _, r := range plan.Regions.File.Regions {
		in := ""
		if r.InCluster {
			in = " (in-cluster)"
		}
		fmt.Fprintf(w, "  region %s: %s%s\n", r.Name, r.Server, in)
	}
}

func newImportReportCmd(from *fromFlags, cf *controlFlags) *cobra.Command {
	tf := &temporalFlags{}
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Where Ferry's compare of each app in shadow differs from Argo CD's",
		Long: `For every app of the control namespace in shadow, and every app an imported
ApplicationSet in shadow generates, compare the sync status, revision and
resources Ferry shows with those Argo CD shows for its Application. It
exits non-zero when any app differs.`,
		Args: cobra.NoArgs,
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, _ []string) error {
			src, _, err := from.client()
			if err != nil {
				return err
			}
			control, err := controlClient(cf)
			if err != nil {
				return err
			}
			views := func(ctx context.Context, name string) (*app.Status, error) {
				v, err := ferryclient.Query(ctx, c, name)
				if err != nil {
					return nil, err
				}
				return &v.Status, nil
			}
			reports, err := argoimport.Report(cmd.Context(), src, control, cf.namespace, views)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			differ := 0
			for _, r := range reports {
				if len(r.Differences) == 0 {
					fmt.Fprintf(w, "%s: same (%s at %.7s)\n", r.Name, r.Ferry.Status, r.Ferry.Revision)
					continue
				}
				differ++
				fmt.Fprintf(w, "%s: differs\n  %s\n", r.Name, strings.Join(r.Differences, "\n  "))
			}
			if differ > 0 {
				return fmt.Errorf("import report: %d of %d apps in shadow differ from Argo CD", differ, len(reports))
			}
			fmt.Fprintf(w, "%d apps in shadow, none differs from Argo CD.\n", len(reports))
			return nil
		}),
	}
	tf.registerAs(cmd, "temporal-namespace")
	return cmd
}

func newTakeoverCmd(cf *controlFlags) *cobra.Command {
	var from fromFlags
	cmd := &cobra.Command{
		Use:   "takeover NAME...",
		Short: "Hand apps in shadow over from Argo CD to Ferry, restarting nothing",
		Long: `Take over apps that ferry import brought in shadow: Argo CD's Application
loses its finalizers and is deleted, so that Argo CD deletes nothing it
applied; then the Ferry app gets back its automated sync policy and
finalizers. Its next sync takes over the fields Argo CD's field managers own
(the objects stay, with their UIDs: no Pod restarts), and from then on a
field deleted from Git is deleted from the cluster.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			src, _, err := from.client()
			if err != nil {
				return err
			}
			control, err := controlClient(cf)
			if err != nil {
				return err
			}
			for _, name := range names {
				if err := argoimport.Takeover(cmd.Context(), src, control, cf.namespace, name); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: taken over from Argo CD\n", name)
			}
			return nil
		},
	}
	from.register(cmd)
	return cmd
}

func newAppSetTakeoverCmd() *cobra.Command {
	var (
		from fromFlags
		cf   controlFlags
	)
	cmd := &cobra.Command{
		Use:   "takeover NAME...",
		Short: "Hand ApplicationSets in shadow over from Argo CD to Ferry, restarting nothing",
		Long: `Take over ApplicationSets that ferry import brought in shadow: Argo CD's
ApplicationSet is deleted leaving its Applications, which then lose their
finalizers and are deleted, so that Argo CD deletes nothing it applied;
then the Ferry ApplicationSet's template gets back its automated sync policy
and finalizers, and the apps it generates leave shadow. Their next sync
takes over the fields Argo CD's field managers own (the objects stay, with
their UIDs: no Pod restarts).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			src, _, err := from.client()
			if err != nil {
				return err
			}
			control, err := controlClient(&cf)
			if err != nil {
				return err
			}
			for _, name := range names {
				if err := argoimport.TakeoverSet(cmd.Context(), src, control, cf.namespace, name); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "applicationset %s: taken over from Argo CD\n", name)
			}
			return nil
		},
	}
	from.register(cmd)
	cf.register(cmd)
	return cmd
}
