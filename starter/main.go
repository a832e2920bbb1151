// Command ferry is Ferry's CLI: `ferry app …` drives Application workflows,
// `ferry dev up` runs the local stack.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "ferry:", err)
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		os.Exit(1)
	}
}

// newRootCmd is the whole command tree; docs/reference/cli is generated
// from it.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "ferry",
		Short:         "Ferry keeps Kubernetes clusters in several regions in sync with Git",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newDevCmd(), newAppCmd(), newProjectCmd(), newAppSetCmd(), newLoginCmd(), newLogoutCmd(), newImportCmd(), newClusterCmd())
	return root
}
