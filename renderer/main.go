// Command ferry-render is Ferry's renderer process: what a render sandbox
// runs, one request on stdin, its answer on stdout (see sandbox.Serve).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/ferry-gitops/ferry/internal/sandbox"
)

func main() {
	args := os.Args[1:]
	if len(args) > 0 && args[0] == sandbox.RenderArg {
		args = args[1:]
	}
	if err := sandbox.Serve(context.Background(), args, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ferry-render:", err)
		os.Exit(1)
	}
}
