// Package multiregion shows Ferry's regions on the real stack with three
// regions, each its own control plane: two workers on one region's queue
// and one of them killed mid-sync, a region whose API server goes down and
// comes back, and a progressive rollout whose first stage fails.
package multiregion

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

var regions = []string{"us-east-1", "eu-west-1", "ap-south-1"}

var stack *devenv.Stack

// TestMain starts one stack with three regions for the package. With
// -short there is no stack and every test skips, saying so.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: regions}, &stack))
}

func newEnv(t *testing.T) *e2etest.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the real stack with three regions: run without -short")
	}
	return &e2etest.Env{Stack: stack, Regions: regions}
}

// regionRoles are the arguments of a worker serving every region's queue
// and not the control queue.
func regionRoles() []string {
	var args []string
	for _, r := range regions {
		args = append(args, "--region", r)
	}
	return args
}

// startFailoverWorkers starts a control worker and two workers that both
// serve every region's queue, for a test to kill one of them.
func startFailoverWorkers(t *testing.T, e *e2etest.Env) []*e2etest.Worker {
	t.Helper()
	e.StartWorker(t, "--control")
	return []*e2etest.Worker{e.StartWorker(t, regionRoles()...), e.StartWorker(t, regionRoles()...)}
}

func configMap(name, version string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  version: %s\n", name, version)
}

// freeze stops region's kube-apiserver (SIGSTOP: it accepts connections and
// answers nothing) and returns thaw, which lets it go on; thaw runs at the
// test's end too, if the test has not called it.
func freeze(t *testing.T, region string) (thaw func()) {
	t.Helper()
	require.NoError(t, stack.FreezeAPIServer(region))
	thawed := false
	thaw = func() {
		if !thawed {
			thawed = true
			require.NoError(t, stack.ThawAPIServer(region))
		}
	}
	t.Cleanup(thaw)
	return thaw
}
