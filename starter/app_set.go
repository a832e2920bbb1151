package main

import (
	"fmt"

	jsonpatch "github.com/evanphx/json-patch"
	"github.com/spf13/cobra"

	"github.com/ferry-gitops/ferry/internal/app"
)

// The commands that change an app's spec in place, as argocd's of the same
// names; each goes through updateApp.

func newSetCmd(tf *temporalFlags, cf *controlFlags) *cobra.Command {
	var f setFlags
	cmd := &cobra.Command{
		Use:   "set NAME [flags]",
		Short: "Change an app's source, destination, Helm parameters, kustomize images or sync policy",
		Long: `Change an app's spec, as argocd app set does: only the fields of the flags
given change. The new spec is read as ferry app apply reads a file, every
problem named at once; with one, nothing is changed. Then it is written
whole: through ferry-server once logged in, as the Application object
when the app is one (--control-namespace), else through the app's spec
update.

A multi-source app's source flags need --source-position, 1 for the
first of spec.sources. --helm-set and --helm-set-string replace a
parameter of the same name, --kustomize-image the override of the same
image; --values replaces the value files. --sync-option adds an option,
replacing one of the same key, and !Option removes it. --auto-prune,
--self-heal and --allow-empty need automated sync, from the spec or from
--sync-policy automated given with them.

Argo CD's flags that Ferry does not take (--jsonnet-*, --plugin-env, ...)
are refused, each naming what to do instead.`,
		Example: `  ferry app set guestbook --revision v1.2.0
  ferry app set guestbook --helm-set replicaCount=3 --helm-set-string image.tag=1.27
  ferry app set guestbook --kustomize-image nginx=registry.example/nginx:1.27
  ferry app set guestbook --sync-policy automated --self-heal --auto-prune
  ferry app set shop --source-position 2 --revision main`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return updateApp(cmd, tf, cf, args[0], specEdit(func(a *app.Application) error {
				return f.apply(cmd.Flags(), a)
			}))
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func newUnsetCmd(tf *temporalFlags, cf *controlFlags) *cobra.Command {
	var f unsetFlags
	cmd := &cobra.Command{
		Use:   "unset NAME [flags]",
		Short: "Remove an app's Helm parameters, value files or kustomize overrides",
		Long: `Remove overrides from an app's source, as argocd app unset does. Removing
what the source does not have is an error, so that a typo is not taken for
a change; with any error, nothing is changed. The spec is then written as
ferry app set writes it.`,
		Example: `  ferry app unset guestbook -p replicaCount --kustomize-image nginx
  ferry app unset guestbook --values values-prod.yaml --nameprefix`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return updateApp(cmd, tf, cf, args[0], specEdit(func(a *app.Application) error {
				return f.apply(cmd.Flags(), a)
			}))
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// patchTypes are ferry app patch's --type values, as argocd's.
var patchTypes = []string{"json", "merge"}

func newPatchCmd(tf *temporalFlags, cf *controlFlags) *cobra.Command {
	var patch, patchType string
	cmd := &cobra.Command{
		Use:   "patch NAME --patch PATCH [--type json|merge]",
		Short: "Patch an app's Application with a JSON patch or a merge patch",
		Long: `Patch an app's Application (apiVersion, kind, metadata and spec), as
argocd app patch does: --type json (the default) takes a JSON patch (RFC
6902, a list of operations on paths such as /spec/source/targetRevision),
--type merge a JSON merge patch (RFC 7386). The result is read as ferry app
apply reads a file, every problem named at once; with one, nothing is
changed. It may not rename the app.`,
		Example: `  ferry app patch guestbook --patch '[{"op": "replace", "path": "/spec/source/path", "value": "guestbook-v2"}]'
  ferry app patch guestbook --type merge --patch '{"spec": {"source": {"targetRevision": "v1.2.0"}}}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			edit, err := patchEdit(patch, patchType)
			if err != nil {
				return fmt.Errorf("app %q: %w", args[0], err)
			}
			return updateApp(cmd, tf, cf, args[0], edit)
		},
	}
	cmd.Flags().StringVar(&patch, "patch", "", "the patch, as JSON")
	cmd.Flags().StringVar(&patchType, "type", "json", "json (RFC 6902) or merge (RFC 7386)")
	_ = cmd.MarkFlagRequired("patch")
	return cmd
}

// patchEdit is the edit of a patch of the given type.
func patchEdit(patch, patchType string) (docEdit, error) {
	switch patchType {
	case "json":
		ops, err := jsonpatch.DecodePatch([]byte(patch))
		if err != nil {
			return nil, fmt.Errorf("--patch: not a JSON patch (a list of operations such as [{\"op\": \"replace\", \"path\": \"/spec/source/path\", \"value\": \"x\"}]): %w", err)
		}
		return func(doc []byte) ([]byte, error) {
			out, err := ops.Apply(doc)
			if err != nil {
				return nil, fmt.Errorf("apply the JSON patch: %w", err)
			}
			return out, nil
		}, nil
	case "merge":
		return func(doc []byte) ([]byte, error) {
			out, err := jsonpatch.MergePatch(doc, []byte(patch))
			if err != nil {
				return nil, fmt.Errorf("--patch: not a JSON merge patch (an object such as {\"spec\": {\"source\": {\"path\": \"x\"}}}): %w", err)
			}
			return out, nil
		}, nil
	}
	return nil, fmt.Errorf("--type %q: want json or merge", patchType)
}

func newAddSourceCmd(tf *temporalFlags, cf *controlFlags) *cobra.Command {
	var f setFlags
	cmd := &cobra.Command{
		Use:   "add-source NAME --repo URL [flags]",
		Short: "Add a source to an app: it becomes (or stays) a multi-source app",
		Long: `Add a source at the end of an app's spec.sources, as argocd app add-source
does: a single-source app becomes a multi-source app whose first source is
its spec.source. The new source takes ferry app set's source flags
(--repo, --path, --revision, --helm-chart, --ref, --helm-set, ...).`,
		Example: `  ferry app add-source shop --repo https://git.example/values.git --ref values
  ferry app add-source shop --repo https://charts.example --helm-chart redis --revision 19.0.0`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("repo") {
				return fmt.Errorf("app %q: add-source needs --repo: the new source's repository", args[0])
			}
			if cmd.Flags().Changed("source-position") {
				return fmt.Errorf("app %q: --source-position: the new source goes at the end of spec.sources", args[0])
			}
			return updateApp(cmd, tf, cf, args[0], specEdit(func(a *app.Application) error {
				a.AddSource(app.Source{})
				f.sourcePosition = len(a.Spec.Sources)
				return f.apply(cmd.Flags(), a)
			}))
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func newRemoveSourceCmd(tf *temporalFlags, cf *controlFlags) *cobra.Command {
	var position int
	cmd := &cobra.Command{
		Use:   "remove-source NAME --source-position N",
		Short: "Remove a source of a multi-source app",
		Long: `Remove the source at --source-position (1 for the first of spec.sources),
as argocd app remove-source does. An app keeps at least one source: one
left becomes its spec.source.`,
		Example: `  ferry app remove-source shop --source-position 2`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return updateApp(cmd, tf, cf, args[0], specEdit(func(a *app.Application) error {
				return a.RemoveSource(position)
			}))
		},
	}
	cmd.Flags().IntVar(&position, "source-position", 0, "the source to remove, 1 for the first of spec.sources")
	_ = cmd.MarkFlagRequired("source-position")
	return cmd
}
