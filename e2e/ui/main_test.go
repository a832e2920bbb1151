// Package ui drives ferry-server's web UI in a real browser, Debian's
// Chromium through chromedp, against the real stack with a control
// cluster and Dex: what a user sees and clicks, found by role and name.
package ui

import (
	"flag"
	"os"
	"testing"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

var regions = []string{"us-east-1"}

var stack *devenv.Stack

// TestMain starts one stack with a region, a control cluster and Dex.
// With -short there is no stack and every test skips, saying so.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: regions, Control: true}, &stack))
}

func newEnv(t *testing.T) *e2etest.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the real stack with a control cluster and a browser: run without -short")
	}
	return &e2etest.Env{Stack: stack, Regions: regions}
}

// kubectl runs kubectl against the control cluster's namespace, with stdin.
func kubectl(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	return e2etest.ControlKubectl(t, stack, stdin, args...)
}

// adminPassword is the admin's first password, as an Argo CD user reads it.
func adminPassword(t *testing.T) string {
	t.Helper()
	return e2etest.AdminPassword(t, stack)
}
