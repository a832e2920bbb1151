package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/regionlive"
)

// `ferry app manifests` prints what Git says (rendered here, as `ferry app
// diff` renders) or what runs (read through the kubeconfig, one context per
// region). Like diff, it runs on the user's machine: manifests never pass
// through a workflow's history.

type manifestsFlags struct {
	diffFlags
	source string
}

func newManifestsCmd(tf *temporalFlags) *cobra.Command {
	f := &manifestsFlags{}
	cmd := &cobra.Command{
		Use:   "manifests NAME",
		Short: "Print the app's manifests: as rendered from Git, or as they run in each region",
		Long: `Print the app's manifests as YAML documents, as argocd app manifests does.

--source git (the default) renders them here from Git at the target revision
(or --revision), as ferry app diff does; --source live reads the app's
resources from each region through the kubeconfig context named after it.
Secret values are masked either way.

Once you are logged in (ferry login), both come from ferry-server, with your
rights: --source git shows the manifests the workers rendered at the app's
target revision (another --revision is refused: ferry logout to render it
here), --source live the objects the server reads in the regions.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return throughDoor(func() error { return runManifests(cmd.Context(), tf, f, args[0], cmd.OutOrStdout()) },
				func(a *api) error { return doorManifests(cmd, a, f, args[0]) })
		},
	}
	cmd.Flags().StringVar(&f.source, "source", "git", "git: the rendered manifests; live: the objects in the regions")
	cmd.Flags().StringVar(&f.revision, "revision", "", "with --source git: branch, tag or SHA (default: the app's targetRevision)")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "with --source live: kubeconfig with one context per region (default $KUBECONFIG)")
	cmd.Flags().StringVar(&f.cacheDir, "cache-dir", defaultDiffCacheDir(), "directory of the CLI's Git clone cache")
	cmd.Flags().StringSliceVar(&f.regions, "region", nil, "with --source live: only these regions (default: every destination)")
	return cmd
}

func runManifests(ctx context.Context, tf *temporalFlags, f *manifestsFlags, name string, out io.Writer) error {
	if f.source != "git" && f.source != "live" {
		return fmt.Errorf("--source %q: want git or live", f.source)
	}
	v, err := tf.queryOnce(ctx, name)
	if err != nil {
		return err
	}
	if f.source == "git" {
		objs, _, err := renderForDiff(ctx, &f.diffFlags, &v.Application)
		if err != nil {
			return err
		}
		return printManifests(out, "", objs)
	}
	rs := &regionlive.Regions{Kubeconfig: f.kubeconfig}
	var failed []error
	for _, d := range v.Destinations(knownRegions()) {
		if len(f.regions) > 0 && !contains(f.regions, d.Region) {
			continue
		}
		objs, err := liveObjects(ctx, rs, d.Region, v)
		if perr := printManifests(out, d.Region, objs); perr != nil {
			return perr
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("region %s: %w", d.Region, err))
		}
	}
	return errors.Join(failed...)
}

// liveObjects reads the app's resources in region as the status lists
// them. An object that is gone is skipped.
func liveObjects(ctx context.Context, rs *regionlive.Regions, region string, v *contract.View) ([]*unstructured.Unstructured, error) {
	r, err := openRegion(rs, region)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var objs []*unstructured.Unstructured
	var failed []error
	for _, res := range v.Status.Resources {
		if res.Region != region {
			continue
		}
		obj, err := r.Get(ctx, res.ResourceKey)
		switch {
		case err != nil:
			failed = append(failed, fmt.Errorf("%s %s: %w", kindOf(res.ResourceKey), objectName(res.ResourceKey), err))
		case obj != nil:
			objs = append(objs, obj)
		}
	}
	return objs, errors.Join(failed...)
}

// openRegion connects to region through the kubeconfig context named after
// it, saying so in the CLI's words when there is no such context.
func openRegion(rs *regionlive.Regions, region string) (*regionlive.Region, error) {
	r, err := rs.Region(region)
	if ce := (*regionlive.ConfigError)(nil); errors.As(err, &ce) {
		return nil, fmt.Errorf("%w (the ferry CLI reads each region through the kubeconfig context named after it)", ce.Err)
	}
	return r, err
}

// printManifests writes objs as YAML documents, Secret values masked and
// managed fields left out; region, when set, heads each one as a comment.
func printManifests(out io.Writer, region string, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		o = o.DeepCopy()
		o.SetManagedFields(nil)
		gvk := o.GroupVersionKind()
		if diff.IsSecret(gvk.Group, gvk.Kind) {
			diff.MaskSecret(o.Object)
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, "---")
		if region != "" {
			fmt.Fprintf(out, "# region: %s\n", region)
		}
		if _, err := out.Write(data); err != nil {
			return err
		}
	}
	return nil
}
