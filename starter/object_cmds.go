package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
)

// objectKind is a kind that `ferry <noun>` manages one object a file
// (AppProject, ApplicationSet): how its files are read, how one object is
// applied, and how an error about one is told to the user.
type objectKind[T any] struct {
	objectFiles[T]
	// kind is Argo CD's kind: AppProject, ApplicationSet.
	kind string
	// apply creates the object or updates its spec.
	apply func(ctx context.Context, c client.Client, obj T) error
	// fail turns a Temporal error about the object name into one a user
	// can act on (objectError with the kind's not-found error).
	fail func(name, doing string, err error) error
}

// applyCmd is `ferry <noun> apply -f`: every file is read and validated
// before anything is applied; then each object is applied in turn.
func (k objectKind[T]) applyCmd(tf *temporalFlags, long, example string) *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:     "apply -f FILE|DIR|- [-f ...]",
		Short:   fmt.Sprintf("Create %ss, or update their specs", k.kind),
		Long:    long,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			objs, err := k.collect(files, os.Stdin)
			if err != nil {
				return err
			}
			c, err := tf.dial(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			for _, obj := range objs {
				if err := k.apply(cmd.Context(), c, obj); err != nil {
					return k.fail(k.name(obj), "apply", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %q applied\n", k.noun, k.name(obj))
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, k.kind+" YAML or JSON file, directory of them, or - for stdin; repeatable")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// nameCmd is a `ferry <noun> VERB NAME` that asks one thing of the named
// object's workflow (doing: delete, refresh) and says that it was done.
func (k objectKind[T]) nameCmd(tf *temporalFlags, doing, short, done string, do func(ctx context.Context, c client.Client, name string) error) *cobra.Command {
	return &cobra.Command{
		Use:   doing + " NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, args []string) error {
			if err := do(cmd.Context(), c, args[0]); err != nil {
				return k.fail(args[0], doing, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %q %s\n", k.noun, args[0], done)
			return nil
		}),
	}
}

// getCmd is `ferry <kind> get NAME`: the object's view, queried by get,
// printed as JSON or YAML (-o) or as the kind's text (print; text says
// what that is in the flag's help).
func getCmd[T, V any](k objectKind[T], tf *temporalFlags, short, text string, get func(ctx context.Context, c client.Client, name string) (V, error), print func(out io.Writer, v V, output string) error) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: tf.run(func(cmd *cobra.Command, c client.Client, args []string) error {
			v, err := get(cmd.Context(), c, args[0])
			if err != nil {
				return k.fail(args[0], "query", err)
			}
			return print(cmd.OutOrStdout(), v, output)
		}),
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml; default: "+text)
	return cmd
}
