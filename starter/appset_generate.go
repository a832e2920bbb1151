package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/appset"
	"github.com/ferry-gitops/ferry/internal/appsetgit"
	"github.com/ferry-gitops/ferry/internal/gitsource"
)

func newAppSetGenerateCmd() *cobra.Command {
	var file, output string
	cmd := &cobra.Command{
		Use:   "generate -f FILE [-o yaml|json|wide]",
		Short: "Print the Applications an ApplicationSet would create, without applying anything",
		Long: `Run an ApplicationSet's generators and template here, as argocd appset
generate does, and print the Applications they make: a table, or with -o
yaml or json the Applications themselves (YAML documents separated by ---,
or a JSON list). Nothing is applied and no workflow is asked.

The set is read and validated as ferry appset apply reads it, and each
Application as ferry app apply would read it; an Application that is not
valid is named on stderr, and the command fails. The clusters generator
yields the regions of FERRY_REGIONS_CONFIG (or FERRY_REGIONS), as the
workers are given them; the git generators read the repositories with
the FERRY_GIT_* credentials of the environment, as a worker does with its
own (a worker's repository Secrets are not read here). The project's
restrictions are checked by the set's workflow once applied, not here.`,
		Example: `  ferry appset generate -f team-apps.yaml
  ferry appset generate -f team-apps.yaml -o yaml > apps.yaml`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 { // argocd appset generate FILE
				if file != "" && file != args[0] {
					return fmt.Errorf("give the file once: -f %s or %s", file, args[0])
				}
				file = args[0]
			}
			if file == "" {
				return errors.New("give the ApplicationSet's file: ferry appset generate -f FILE")
			}
			switch output {
			case "", "wide", "yaml", "json":
			default:
				return fmt.Errorf("unknown output format %q: use yaml, json or wide", output)
			}
			sets, err := collectAppSets([]string{file}, os.Stdin)
			if err != nil {
				return err
			}
			apps, err := generateApps(cmd, sets[0])
			if err != nil {
				return err
			}
			return printGenerated(cmd.OutOrStdout(), apps, output)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the ApplicationSet's YAML or JSON file, or - for stdin")
	cmd.Flags().StringVarP(&output, "output", "o", "", "yaml, json or wide; default: a table")
	return cmd
}

// generateApps runs the set's generators and template here, with the
// regions and the Git credentials of the environment.
func generateApps(cmd *cobra.Command, set *appset.ApplicationSet) ([]app.Application, error) {
	opts, err := validateOptions()
	if err != nil {
		return nil, err
	}
	auth, err := gitsource.NewEnvAuth()
	if err != nil {
		return nil, err
	}
	cache, err := os.MkdirTemp("", "ferry-appset-generate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cache)
	gopts := gitsource.DefaultOptions(cache)
	gopts.Auth = auth
	repos, err := gitsource.New(gopts)
	if err != nil {
		return nil, err
	}
	src := &appsetgit.Trees{Repos: repos, Fresh: true}
	defer src.Release()
	control, err := appSetControl()
	if err != nil {
		return nil, err
	}
	res, err := appset.Generate(cmd.Context(), set, appset.Options{Source: src, Clusters: appset.ClustersOf(opts.Regions), Validate: opts, Control: control})
	if err != nil {
		return nil, err
	}
	if len(res.Invalid) > 0 {
		for _, msg := range res.Invalid {
			fmt.Fprintln(cmd.ErrOrStderr(), "ferry:", msg)
		}
		return nil, fmt.Errorf("applicationset %q: %s of the %d generated %s not valid (above): the set would create none of the apps while one is not valid; fix its template or generators",
			set.Metadata.Name, plural(len(res.Invalid), "application"), len(res.Invalid)+len(res.Apps), isAre(len(res.Invalid)))
	}
	return res.Apps, nil
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// printGenerated prints the generated apps: a table, or the Applications.
func printGenerated(out io.Writer, apps []app.Application, output string) error {
	for i := range apps {
		apps[i].APIVersion, apps[i].Kind = app.APIVersion, app.Kind
	}
	switch output {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(apps)
	case "yaml":
		for i := range apps {
			data, err := yaml.Marshal(&apps[i])
			if err != nil {
				return err
			}
			if i > 0 {
				fmt.Fprintln(out, "---")
			}
			if _, err := out.Write(data); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := "NAME\tPROJECT\tDESTINATION\tREPO\tPATH\tTARGET"
	if output == "wide" {
		header += "\tSYNCPOLICY"
	}
	fmt.Fprintln(tw, header)
	for i := range apps {
		a := &apps[i]
		src := a.SourceList()[0]
		var dests []string
		for _, d := range a.DestinationList() {
			dests = append(dests, orDefault(d.Name, d.Server)+"/"+d.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s", a.Metadata.Name, a.ProjectOf(), strings.Join(dests, ","), src.RepoURL,
			orDefault(orDefault(src.Path, src.Chart), "."), orDefault(src.TargetRevision, app.DefaultTargetRevision))
		if output == "wide" {
			fmt.Fprintf(tw, "\t%s", syncPolicyOf(a))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}
