package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
)

func newProjectCmd() *cobra.Command {
	tf := &temporalFlags{}
	cmd := &cobra.Command{Use: "project", Short: "Create, inspect and delete AppProjects: what the apps of a team may deploy, and where"}
	tf.register(cmd)
	cmd.AddCommand(newProjectApplyCmd(tf), newProjectGetCmd(tf), newProjectListCmd(tf), newProjectDeleteCmd(tf),
		newProjectWindowsCmd(tf), newProjectRoleCmd())
	return cmd
}

func newProjectApplyCmd(tf *temporalFlags) *cobra.Command {
	return projects.applyCmd(tf, `Create AppProjects (Argo CD's argoproj.io/v1alpha1 AppProject), or update
their specs: one AppProject per file. -f takes a file, - for stdin, or a
directory (its *.yaml, *.yml and *.json files). Every file is read and
validated first; if any is wrong, nothing is applied.`, `  ferry project apply -f team-a.yaml
  ferry project apply -f projects/`)
}

// projects is the AppProject kind of ferry project.
var projects = objectKind[*app.AppProject]{
	objectFiles: objectFiles[*app.AppProject]{
		noun: "project",
		parse: func(data []byte) (*app.AppProject, error) {
			p, err := app.ParseProject(data)
			if err != nil {
				return nil, err
			}
			return p, app.ValidateProject(p)
		},
		name: func(p *app.AppProject) string { return p.Metadata.Name },
	},
	kind: "AppProject",
	apply: func(ctx context.Context, c client.Client, p *app.AppProject) error {
		_, err := ferryclient.ApplyProject(ctx, c, p)
		return err
	},
	fail: projectError,
}

// collectProjects reads and validates every AppProject -f names before
// anything is applied, and lists every bad file at once.
func collectProjects(values []string, stdin io.Reader) ([]*app.AppProject, error) {
	return projects.collect(values, stdin)
}

func newProjectGetCmd(tf *temporalFlags) *cobra.Command {
	return getCmd(projects, tf, "Show a project's rules", "a summary", ferryclient.GetProject, printProject)
}

func printProject(out io.Writer, v *contract.ProjectView, output string) error {
	if done, err := printStructured(out, v, output); done {
		return err
	}
	s := v.Spec
	fmt.Fprintf(out, "Name:         %s\nDescription:  %s\nDigest:       %s\n", v.Metadata.Name, s.Description, v.Digest)
	fmt.Fprintf(out, "Source repos: %s\n", orNone(strings.Join(s.SourceRepos, ", ")))
	var dests []string
	for _, d := range s.Destinations {
		where := d.Name
		if where == "" {
			where = d.Server
		}
		dests = append(dests, where+"/"+d.Namespace)
	}
	fmt.Fprintf(out, "Destinations: %s\n", orNone(strings.Join(dests, ", ")))
	fmt.Fprintf(out, "Cluster resources allowed:    %s\n", orNone(groupKinds(s.ClusterResourceWhitelist)))
	if len(s.ClusterResourceBlacklist) > 0 {
		fmt.Fprintf(out, "Cluster resources denied:     %s\n", groupKinds(s.ClusterResourceBlacklist))
	}
	allowed := groupKinds(s.NamespaceResourceWhitelist)
	if s.NamespaceResourceWhitelist == nil {
		allowed = "all"
	}
	fmt.Fprintf(out, "Namespaced resources allowed: %s\n", orNone(allowed))
	if len(s.NamespaceResourceBlacklist) > 0 {
		fmt.Fprintf(out, "Namespaced resources denied:  %s\n", groupKinds(s.NamespaceResourceBlacklist))
	}
	if n := len(s.SyncWindows); n > 0 {
		fmt.Fprintf(out, "Sync windows: %d (ferry project windows %s)\n", n, v.Metadata.Name)
	}
	return nil
}

func groupKinds(list []app.GroupKind) string {
	parts := make([]string, len(list))
	for i, gk := range list {
		parts[i] = gk.Group + "/" + gk.Kind
		if gk.Group == "" {
			parts[i] = gk.Kind
		}
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func newProjectListCmd(tf *temporalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the projects, default first (built in, or the AppProject named default that replaces it)",
		Args:  cobra.NoArgs,
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, _ []string) error {
			names, err := ferryclient.ListProjects(cmd.Context(), c)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDESCRIPTION")
			for _, name := range names {
				v, err := ferryclient.GetProject(cmd.Context(), c, name)
				var nf *contract.ProjectNotFoundError
				switch {
				case errors.As(err, &nf):
					continue // deleted meanwhile
				case err != nil:
					return projectError(name, "query", err)
				}
				fmt.Fprintf(tw, "%s\t%s\n", name, strings.TrimSpace(strings.SplitN(v.Spec.Description, "\n", 2)[0]))
			}
			return tw.Flush()
		}),
	}
}

func newProjectDeleteCmd(tf *temporalFlags) *cobra.Command {
	return projects.nameCmd(tf, "delete", "Delete a project; refused while apps use it (deleting the AppProject named default restores the built-in one)", "deleted", ferryclient.DeleteProject)
}

// projectError turns a Temporal error into one a user can act on.
func projectError(name, doing string, err error) error {
	return objectError("project", name, doing, err, &contract.ProjectNotFoundError{Name: name}, func(err error) bool {
		var nf *contract.ProjectNotFoundError
		return errors.As(err, &nf)
	}, "appproject")
}
