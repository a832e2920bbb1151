package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/customize"
	"github.com/ferry-gitops/ferry/internal/diff"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/kube"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/pipeline"
	"github.com/ferry-gitops/ferry/internal/redisconn"
)

// `ferry app diff` computes the diff itself, on the machine it runs on:
// the app's spec comes from its workflow (the status query), its manifests
// from Git (or from the workers' manifest cache in Redis, when it has
// them), the live objects from each region's cluster through KUBECONFIG,
// one context per region as `ferry dev up` writes it. Like `argocd app
// diff --local` (and kubectl diff), it needs what it reads: Git access and
// the kubeconfig. The alternative, a diff activity in every region run by
// the workflow, would have put manifest bodies, Secrets masked or not,
// into workflow histories, which carry none by design.

// diffExitCode is the exit status of a diff that found differences, as
// kubectl diff and argocd app diff use it; errors exit with 2.
const diffExitCode = 1

// diffLimit bounds the diff printed for one object.
const diffLimit = 256 << 10

type diffFlags struct {
	revision   string
	kubeconfig string
	redisAddr  string
	cacheDir   string
	regions    []string
	// customizations: the workers' argocd-cm, whose resource.exclusions
	// and inclusions the diff leaves out as the workers do.
	customizations string
}

func newDiffCmd(tf *temporalFlags) *cobra.Command {
	f := &diffFlags{}
	cmd := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show, per region and per resource, a unified diff of the live state against Git",
		Long: `Show a unified diff (like kubectl diff) of every resource that differs from Git,
per region: live against what a sync would make of it (a server-side dry run),
with the app's ignoreDifferences applied and Secret values masked. With the
workers' argocd-cm (--resource-customizations), the kinds its
resource.exclusions/inclusions leave alone are left out, as the workers leave
them, and its resource.customizations.ignoreDifferences apply too.

The diff is computed here: the CLI reads the app's spec from its workflow,
renders its manifests from Git at the target revision (or reads them from the
workers' manifest cache with --redis-addr), and reads each region through the
kubeconfig context named after it. It needs Git access and the kubeconfig, as
argocd app diff --local does.

Once you are logged in (ferry login), ferry-server compares instead, with
your rights, the manifests the workers rendered at the app's target revision
against the regions, with its argocd-cm: --revision, --kubeconfig,
--redis-addr, --cache-dir and --resource-customizations are then refused.

Exit status: 0 when nothing differs, 1 when something does, 2 on error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var differs int
			err := throughDoor(func() (err error) {
				differs, err = runDiff(cmd.Context(), tf, f, args[0], cmd.OutOrStdout())
				return err
			}, func(a *api) (err error) {
				differs, err = doorDiff(cmd, a, f, args[0])
				return err
			})
			if err != nil {
				return exitError{code: 2, err: err}
			}
			if differs > 0 {
				return exitError{code: diffExitCode, err: fmt.Errorf("app %q: %d resources differ from Git", args[0], differs)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.revision, "revision", "", "branch, tag or SHA to diff against (default: the app's targetRevision, resolved now)")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig with one context per region (default $KUBECONFIG)")
	cmd.Flags().StringVar(&f.redisAddr, "redis-addr", firstEnv("", "FERRY_REDIS_ADDR", "REDIS_ADDR"),
		"the workers' manifest cache, read before rendering from Git (env FERRY_REDIS_ADDR or REDIS_ADDR)")
	cmd.Flags().StringVar(&f.cacheDir, "cache-dir", defaultDiffCacheDir(), "directory of the CLI's Git clone cache")
	cmd.Flags().StringSliceVar(&f.regions, "region", nil, "only these regions (default: every destination)")
	cmd.Flags().StringVar(&f.customizations, "resource-customizations", os.Getenv("FERRY_RESOURCE_CUSTOMIZATIONS"),
		"the workers' argocd-cm ConfigMap manifest `FILE`: its resource.exclusions/inclusions and ignoreDifferences (default $FERRY_RESOURCE_CUSTOMIZATIONS)")
	return cmd
}

// runDiff prints the diff of every region and returns how many resources
// differ.
func runDiff(ctx context.Context, tf *temporalFlags, f *diffFlags, name string, out io.Writer) (int, error) {
	set, err := customize.ParseFile(f.customizations)
	if err != nil {
		return 0, err
	}
	c, err := tf.dial(ctx)
	if err != nil {
		return 0, err
	}
	v, err := queryApp(ctx, c, name)
	c.Close()
	if err != nil {
		return 0, err
	}
	objs, sha, err := renderForDiff(ctx, f, &v.Application)
	if err != nil {
		return 0, err
	}
	var opts []string
	if sp := v.Spec.SyncPolicy; sp != nil {
		opts = sp.SyncOptions
	}
	syncOpts, err := app.ParseSyncOptions(opts)
	if err != nil {
		return 0, fmt.Errorf("app %q: %w", name, err)
	}
	rules, err := diff.Compile(append(slices.Clip(v.Spec.IgnoreDifferences), set.IgnoreAll()...))
	if err != nil {
		return 0, fmt.Errorf("app %q: %w", name, err)
	}
	fmt.Fprintf(out, "app %s at %s (%s)\n", name, short(sha), v.PrimaryRepoURL())
	differs := 0
	var failed []error
	for _, d := range v.Destinations(knownRegions()) {
		if len(f.regions) > 0 && !contains(f.regions, d.Region) {
			continue
		}
		excluded := func(group, kind string) bool { return set.Excluded(group, kind, d.Region) }
		n, err := diffRegion(ctx, f, v, d, objs, excluded, kube.CompareRequest{Options: syncOpts, Ignore: rules}, out)
		differs += n
		if err != nil {
			fmt.Fprintf(out, "===== %s: %v\n", d.Region, err)
			failed = append(failed, fmt.Errorf("region %s: %w", d.Region, err))
		}
	}
	if differs == 0 && len(failed) == 0 {
		fmt.Fprintf(out, "no differences: app %q is in sync with %s in every region\n", name, short(sha))
	}
	return differs, errors.Join(failed...)
}

// diffRegion prints one region's diffs.
func diffRegion(ctx context.Context, f *diffFlags, v *contract.View, d app.Target, objs []*unstructured.Unstructured,
	excluded func(group, kind string) bool, req kube.CompareRequest, out io.Writer) (int, error) {
	cfg, err := kube.LoadConfig(f.kubeconfig, d.Region)
	if err != nil {
		return 0, fmt.Errorf("%w (ferry app diff reads each region through the kubeconfig context named after it)", err)
	}
	cluster, err := kube.NewCluster(cfg)
	if err != nil {
		return 0, err
	}
	req.App, req.Namespace = v.Metadata.Name, d.Namespace
	for _, o := range objs {
		if gvk := o.GroupVersionKind(); !excluded(gvk.Group, gvk.Kind) {
			req.Objects = append(req.Objects, o)
		}
	}
	for _, r := range v.Status.Resources {
		if r.Region == d.Region && !excluded(r.Group, r.Kind) {
			req.Inventory = append(req.Inventory, r.ResourceKey)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	diffs, err := cluster.Diff(ctx, req, diffLimit)
	for _, od := range diffs {
		k := od.Key
		fmt.Fprintf(out, "===== %s: %s %s: %s\n", d.Region, kindOf(k), objectName(k), od.Message)
		if od.Unified != "" {
			fmt.Fprint(out, od.Unified)
		}
	}
	return len(diffs), err
}

// renderForDiff renders the app's manifests at the revision to diff
// against, as the workers do.
func renderForDiff(ctx context.Context, f *diffFlags, a *app.Application) ([]*unstructured.Unstructured, string, error) {
	auth, err := gitsource.NewEnvAuth()
	if err != nil {
		return nil, "", fmt.Errorf("git credentials: %w", err)
	}
	// The workers' entries open only with their FERRY_CACHE_KEY; without it
	// the cache is of no use, and Git is read.
	cache := pipeline.Cache{Key: os.Getenv(manifests.EnvCacheKey), KeyRequired: true, TTL: 24 * time.Hour}
	if f.redisAddr != "" {
		cache.Redis = &redisconn.Options{Addr: f.redisAddr, Username: os.Getenv("FERRY_REDIS_USERNAME"), Password: os.Getenv("FERRY_REDIS_PASSWORD")}
	}
	p, err := pipeline.New(pipeline.Options{CacheDir: f.cacheDir, Auth: auth, Cache: cache})
	if err != nil {
		return nil, "", err
	}
	repos, charts, loader := p.Repos, p.Charts, p.Loader
	src := a.Spec.Source
	revision := f.revision
	if revision == "" {
		revision = src.Revision()
	}
	ns := ""
	if dests := a.Destinations(knownRegions()); len(dests) > 0 {
		ns = dests[0].Namespace // Helm's release namespace, as the workers render it
	}
	var loaded *manifests.Loaded
	var sha string
	if a.IsMultiSource() {
		loaded, sha, err = renderSourcesForDiff(ctx, f, a, ns, repos, charts, loader) // app_diff_sources.go
		if err != nil {
			return nil, "", err
		}
	} else {
		if sha, err = resolveForDiff(ctx, repos, charts, src, revision); err != nil {
			return nil, "", err
		}
		loaded, err = loader.LoadApp(ctx, manifests.Request{RepoURL: src.RepoURL, SHA: sha, Source: src, App: a.Metadata.Name, Namespace: ns})
		if err != nil {
			return nil, "", diffRenderError(src, sha, err)
		}
	}
	objs := loaded.Objects[:0]
	for _, o := range loaded.Objects {
		if !app.IsApplication(o.GetAPIVersion(), o.GetKind()) { // an app of apps' children run as apps
			objs = append(objs, o)
		}
	}
	return objs, sha, nil
}

// diffRenderError names the source of a render the CLI could not do; for
// a plugin source it says why: plugins run only in a worker's sandbox.
func diffRenderError(src app.Source, sha string, err error) error {
	err = fmt.Errorf("render %s at %s: %w", gitsource.RedactURL(src.RepoURL), short(sha), err)
	if src.Plugin != nil {
		err = fmt.Errorf("%w (the ferry CLI runs no config-management plugins, only workers do, in their sandbox: "+
			"give --redis-addr with the workers' FERRY_CACHE_KEY to diff against the manifests they rendered)", err)
	}
	return err
}

func kindOf(k app.ResourceKey) string {
	if k.Group == "" {
		return k.Kind
	}
	return k.Group + "/" + k.Kind
}

func objectName(k app.ResourceKey) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func defaultDiffCacheDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "ferry", "cli-repos")
	}
	return filepath.Join(os.TempDir(), "ferry-cli-repos")
}

// exitError makes main exit with code; its message goes to stderr.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
