package main

import (
	"fmt"
	"net/url"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

func newAppCmd() *cobra.Command {
	tf := &temporalFlags{}
	cmd := &cobra.Command{Use: "app", Short: "Create, inspect, sync and delete Applications"}
	tf.register(cmd)
	cf := &controlFlags{}
	cf.register(cmd)
	cmd.AddCommand(newApplyCmd(tf, cf), newGetCmd(tf), newListCmd(tf), newSyncCmd(tf), newRefreshCmd(tf),
		newDiffCmd(tf), newManifestsCmd(tf), newResourcesCmd(tf), newLogsCmd(tf), newActionsCmd(tf), newHistoryCmd(tf), newRollbackCmd(tf), newDeleteCmd(tf, cf), newWaitCmd(tf), newConfirmCmd(tf), newTerminateOpCmd(tf), newTakeoverCmd(cf),
		newSetCmd(tf, cf), newUnsetCmd(tf, cf), newPatchCmd(tf, cf), newEditCmd(tf, cf), newAddSourceCmd(tf, cf), newRemoveSourceCmd(tf, cf),
		newPatchResourceCmd(tf), newDeleteResourceCmd(tf))
	return cmd
}

func newApplyCmd(tf *temporalFlags, cf *controlFlags) *cobra.Command {
	var files []string
	var recursive bool
	var parallel int
	var forceAdopt bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR|- [-f ...]",
		Short: "Create Applications, or update their specs",
		Long: `Create Applications, or update their specs: one Application per file.

-f takes a file, - for stdin, or a directory: every *.yaml, *.yml and *.json
file directly in it (with -R, in its subdirectories too), in sorted order.
Repeat -f to apply several. Every file is read and validated first: if any is
wrong, or two name the same app, nothing is applied and each bad file is
listed. Then the apps are applied over one connection, --parallel at a time,
with one line per app in the order given. If some fail, the others stay
applied; apply is idempotent, so running the same command again is the fix.

An app that is new to the server is started at once, without waiting for a
worker to take it up, when this command knows the regions (FERRY_REGIONS or
FERRY_REGIONS_CONFIG, as the workers are given them) and a worker polls: the
file was validated here as a worker would. An app that runs already gets the
new spec through its worker, which validates it again.

An app that an app of apps created belongs to it: apply refuses it, naming
the owner, unless --force-adopt, which makes the app yours (its parent then
leaves it alone).

With a control cluster (--control-namespace, FERRY_CONTROL_NAMESPACE), the
Application object is the app: apply writes each file as the object in that
namespace (server-side apply, field manager ferry) and returns once a control
worker runs the app with its spec, or with the object's InvalidSpecError.`,
		Example: `  ferry app apply -f guestbook.yaml
  ferry app apply -f apps/ --parallel 16
  cat app.json | ferry app apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if parallel < 1 {
				return fmt.Errorf("--parallel %d: want at least 1 app applied at a time, e.g. --parallel %d", parallel, defaultApplyParallel)
			}
			opts, err := validateOptions()
			if err != nil {
				return err
			}
			inputs, err := collectApplyInputs(files, recursive, os.Stdin, opts)
			if err != nil {
				return err
			}
			for _, in := range inputs {
				for _, w := range in.app.Warnings() {
					fmt.Fprintln(cmd.ErrOrStderr(), "ferry: warning:", w)
				}
			}
			c, err := tf.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			apply := applier(cmd.Context(), c, opts, contract.SpecRequest{ForceAdopt: forceAdopt}, cmd.ErrOrStderr())
			if objects, err := cf.objects(); err != nil {
				return err
			} else if objects != nil {
				apply = objects.applier(c, inputs)
			}
			return applyAll(cmd.Context(), inputs, parallel, apply, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, "Application YAML or JSON file, directory of them, or - for stdin; repeatable")
	cmd.Flags().BoolVarP(&recursive, "recursive", "R", false, "read the directories given with -f recursively")
	cmd.Flags().IntVar(&parallel, "parallel", defaultApplyParallel, "how many apps to apply at a time")
	cmd.Flags().BoolVar(&forceAdopt, "force-adopt", false, "take over apps that an app of apps owns: they become yours")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func newRefreshCmd(tf *temporalFlags) *cobra.Command {
	var hard bool
	cmd := &cobra.Command{
		Use:   "refresh NAME",
		Short: "Compare the app with Git and its regions now",
		Args:  cobra.ExactArgs(1),
		RunE: tf.runOrDoor(func(cmd *cobra.Command, c client.Client, args []string) error {
			err := c.SignalWorkflow(cmd.Context(), contract.WorkflowID(args[0]), "", contract.SignalRefresh,
				contract.RefreshRequest{Hard: hard})
			if err != nil {
				return appError(args[0], "refresh", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "refresh of %q requested\n", args[0])
			return nil
		}, func(cmd *cobra.Command, a *api, args []string) error {
			mode := "normal"
			if hard {
				mode = "hard"
			}
			if _, err := doorView(cmd.Context(), a, args[0], url.Values{"refresh": {mode}}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "refresh of %q requested\n", args[0])
			return nil
		}),
	}
	cmd.Flags().BoolVar(&hard, "hard", false, "render the manifests again even if the revision has not moved")
	return cmd
}

func newDeleteCmd(tf *temporalFlags, cf *controlFlags) *cobra.Command {
	var cascade bool
	var policy string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an app with its resources in every region (--cascade=false keeps them)",
		Long: `Delete an app, as argocd app delete does: by default it cascades, deleting
the app's resources in every region first, and for an app of apps the child
apps it created, each of which deletes its own resources only when it carries
Argo CD's resources finalizer (` + app.ResourcesFinalizer + ` or
` + app.BackgroundFinalizer + `), and cascades to its own children the same way.
--cascade=false keeps the resources (and the child apps), finalizer or not.

--propagation-policy is how the resources are deleted: foreground (each goes
once what it owns is gone), background (the garbage collector deletes what they
own afterwards) or orphan (what they own stays). Left out: the one the app's
finalizer names, else foreground. The command returns once the resources are
gone.

With a control cluster (--control-namespace), an app that is an Application
object is deleted as argocd app delete deletes one: the object's resources
finalizer is set as --cascade and --propagation-policy say (orphan has no
finalizer), the object is deleted, and the command returns once it is gone.`,
		Example: `  ferry app delete guestbook
  ferry app delete guestbook --propagation-policy background
  ferry app delete guestbook --cascade=false`,
		Args: cobra.ExactArgs(1),
		RunE: tf.runOrDoor(func(cmd *cobra.Command, c client.Client, args []string) error {
			req := contract.DeleteRequest{Cascade: &cascade, Propagation: policy}
			if policy != "" && !cascade {
				return fmt.Errorf("app %q: --propagation-policy %s deletes the resources and --cascade=false keeps them: give one of them", args[0], policy)
			}
			if objects, err := cf.objects(); err != nil {
				return err
			} else if objects != nil {
				if found, err := objects.delete(cmd.Context(), args[0], cascade, policy); found || err != nil {
					if err == nil {
						fmt.Fprintf(cmd.OutOrStdout(), "application %q deleted\n", args[0])
					}
					return err
				}
			}
			out, err := ferryclient.DeleteApp(cmd.Context(), c, args[0], req)
			if err != nil {
				return appError(args[0], "delete", err)
			}
			if out.Waiting != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "application %q is being deleted: %s\n", args[0], out.Waiting)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application %q deleted\n", args[0])
			return nil
		}, func(cmd *cobra.Command, a *api, args []string) error {
			path, q := appPath(args[0], "")
			q.Set("cascade", strconv.FormatBool(cascade))
			if policy != "" {
				q.Set("propagationPolicy", policy)
			}
			if err := a.do(cmd.Context(), "DELETE", path, q, nil, nil); err != nil {
				return fmt.Errorf("app %q: delete: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "application %q deleted\n", args[0])
			return nil
		}),
	}
	cmd.Flags().BoolVar(&cascade, "cascade", true, "delete the app's resources in every region, and its child apps, too; --cascade=false keeps them")
	cmd.Flags().StringVar(&policy, "propagation-policy", "", "foreground, background or orphan (default: the app's finalizer's, else foreground)")
	return cmd
}

func newRollbackCmd(tf *temporalFlags) *cobra.Command {
	var wait, prune bool
	cmd := &cobra.Command{
		Use:   "rollback NAME ID",
		Short: "Deploy a history entry again: its revision with the source it was deployed from (see ferry app history)",
		Long: `Deploy a history entry again, as argocd app rollback does: its revision with
the source it was deployed from (path, chart, every option), whatever
spec.source says now. The spec is left as it is, so the app shows OutOfSync
with it afterwards. Refused while automated sync is on.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil || id < 0 {
				return fmt.Errorf("rollback ID %q: want a history ID such as 3: see ferry app history %s", args[1], args[0])
			}
			return runSync(cmd, tf, args[0], contract.SyncRequest{RollbackID: &id, Prune: prune}, wait)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", true, "wait until the operation ends")
	cmd.Flags().BoolVar(&prune, "prune", false, "delete tracked resources that the history entry does not hold")
	return cmd
}
