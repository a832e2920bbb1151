package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

// `ferry app patch-resource` and `delete-resource` change one of an app's
// live objects in its regions, as argocd's of the same names, through the
// user's kubeconfig (a context per region), as ferry app actions does: no
// object passes through a workflow. The app sees the change as drift.

// serverLacksResourceEdits: ferry-server has no such API yet.
const serverLacksResourceEdits = "ferry-server does not offer it yet: run it with your kubeconfig after ferry logout, or change the object in Git"

func newPatchResourceCmd(tf *temporalFlags) *cobra.Command {
	f := &actionFlags{}
	var patch, patchType string
	cmd := &cobra.Command{
		Use:   "patch-resource NAME --kind KIND --resource-name NAME --patch PATCH [--patch-type TYPE]",
		Short: "Patch one of the app's live objects in each of its regions",
		Long: `Patch one of the app's live objects, in every region the app deploys to
(or --region), as argocd app patch-resource does. --patch-type is
application/merge-patch+json (merge, the default),
application/json-patch+json (json) or
application/strategic-merge-patch+json (strategic). Each region is changed
through the kubeconfig context named after it. The object then differs
from Git: the app shows it OutOfSync, and self-heal undoes the change.`,
		Example: `  ferry app patch-resource guestbook --kind Deployment --resource-name guestbook-ui --patch '{"spec": {"replicas": 2}}'
  ferry app patch-resource guestbook --kind ConfigMap --resource-name settings --region us-east-1 \
    --patch '[{"op": "replace", "path": "/data/mode", "value": "debug"}]' --patch-type json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pt, err := regionlive.PatchType(patchType)
			if err != nil {
				return fmt.Errorf("--patch-type: %w", err)
			}
			return throughDoor(func() error {
				return eachTarget(cmd.Context(), tf, f, args[0], func(ctx context.Context, r *regionlive.Region, k app.ResourceKey) error {
					return reportDone(cmd.OutOrStdout(), r, k, "patched", r.Patch(ctx, k, []byte(patch), pt))
				})
			}, func(*api) error { return errors.New("patch-resource: " + serverLacksResourceEdits) })
		},
	}
	f.registerTarget(cmd, true)
	cmd.Flags().StringVar(&patch, "patch", "", "the patch, as JSON")
	cmd.Flags().StringVar(&patchType, "patch-type", "application/merge-patch+json", "application/merge-patch+json, application/json-patch+json or application/strategic-merge-patch+json (or merge, json, strategic)")
	_ = cmd.MarkFlagRequired("patch")
	return cmd
}

func newDeleteResourceCmd(tf *temporalFlags) *cobra.Command {
	f := &actionFlags{}
	var force, orphan bool
	cmd := &cobra.Command{
		Use:   "delete-resource NAME --kind KIND --resource-name NAME [--force] [--orphan]",
		Short: "Delete one of the app's live objects in each of its regions",
		Long: `Delete one of the app's live objects, in every region the app deploys to
(or --region), as argocd app delete-resource does: what it owns goes first
(foreground), or stays with --orphan; --force deletes it without a grace
period. Each region is changed through the kubeconfig context named after
it. The app then shows the object missing, and its next sync (or
self-heal) creates it again.`,
		Example: `  ferry app delete-resource guestbook --kind Pod --resource-name guestbook-ui-7d4f --force
  ferry app delete-resource guestbook --kind Deployment --resource-name guestbook-ui --orphan --region eu-west-1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return throughDoor(func() error {
				return eachTarget(cmd.Context(), tf, f, args[0], func(ctx context.Context, r *regionlive.Region, k app.ResourceKey) error {
					return reportDone(cmd.OutOrStdout(), r, k, "deleted", r.Delete(ctx, k, force, orphan))
				})
			}, func(*api) error { return errors.New("delete-resource: " + serverLacksResourceEdits) })
		},
	}
	f.registerTarget(cmd, true)
	cmd.Flags().BoolVar(&force, "force", false, "delete without a grace period")
	cmd.Flags().BoolVar(&orphan, "orphan", false, "leave the objects it owns")
	return cmd
}

// reportDone says what was done to k in region r, unless err.
func reportDone(out io.Writer, r *regionlive.Region, k app.ResourceKey, done string, err error) error {
	if err == nil {
		fmt.Fprintf(out, "%s: %s %s %s\n", r.Name, kindOf(k), objectName(k), done)
	}
	return err
}

// eachTarget runs do on the one object the flags name, in each region; a
// region that fails does not stop the others, and its error names the
// object and the region.
func eachTarget(ctx context.Context, tf *temporalFlags, f *actionFlags, name string,
	do func(ctx context.Context, r *regionlive.Region, k app.ResourceKey) error) error {
	order, byRegion, err := f.regionTargets(ctx, tf, name)
	if err != nil {
		return err
	}
	rs := &regionlive.Regions{Kubeconfig: f.kubeconfig}
	var errs []error
	for _, region := range order {
		k, err := f.oneTarget(name, region, byRegion[region])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r, err := openRegion(rs, region)
		if err == nil {
			err = do(ctx, r, k)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("app %q: %s %s in region %s: %w", name, kindOf(k), objectName(k), region, err))
		}
	}
	return errors.Join(errs...)
}
