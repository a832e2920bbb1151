// Package e2e runs Ferry end to end on the real local stack: the Temporal dev
// server, a control plane per region, Redis and the Git server, with the
// ferry and ferry-worker binaries as a user runs them. The helpers here
// wrap package e2etest, which other end-to-end packages share.
package e2e

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/e2e/e2etest"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

var stack *devenv.Stack

var regions = []string{"us-east-1", "eu-west-1"}

func TestMain(m *testing.M) {
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: regions}, &stack))
}

func testEnv() *e2etest.Env { return &e2etest.Env{Stack: stack, Regions: regions} }

// bin returns the path of a Ferry binary: from FERRY_BIN (make test builds
// them), else built once into a temp dir.
func bin(t *testing.T, name string) string { return testEnv().Bin(t, name) }

func env() []string { return testEnv().Environ() }

// worker is a ferry-worker process.
type worker struct{ *e2etest.Worker }

// startWorker starts a worker serving the control queue and every region.
func startWorker(t *testing.T, extra ...string) *worker {
	t.Helper()
	return startWorkerEnv(t, nil, extra...)
}

// startWorkerEnv is startWorker with extra environment variables (NAME=value).
func startWorkerEnv(t *testing.T, extraEnv []string, extra ...string) *worker {
	t.Helper()
	return startWorkerWithEnv(t, extraEnv, append(testEnv().AllRoles(), extra...)...)
}

// startWorkerWith starts a worker serving what args say (--control,
// --region …), connected to the stack.
func startWorkerWith(t *testing.T, roles ...string) *worker {
	t.Helper()
	return startWorkerWithEnv(t, nil, roles...)
}

// startWorkerWithEnv is startWorkerWith with extra environment variables.
func startWorkerWithEnv(t *testing.T, extraEnv []string, roles ...string) *worker {
	t.Helper()
	return &worker{testEnv().StartWorkerEnv(t, extraEnv, roles...)}
}

func (w *worker) stop() { w.Stop() }

// allowHosts are the worker arguments that list, for its host policy, the
// stack's servers and the test's own servers at urls, which listen on
// loopback too (a flag replaces its FERRY_* twin, so the stack's are
// repeated).
func allowHosts(t *testing.T, urls ...string) []string {
	t.Helper()
	hosts := []string{testEnv().Stack.RenderAllowHosts()}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		hosts = append(hosts, u.Host)
	}
	return []string{"--render-allow-hosts", strings.Join(hosts, ",")}
}

// kill9 kills the worker the hard way, as a crashed machine would.
func (w *worker) kill9() { w.Kill9() }

// ferry runs the ferry CLI and returns its combined output.
func ferry(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return testEnv().Ferry(t, args...)
}

func mustFerry(t *testing.T, args ...string) string {
	t.Helper()
	return testEnv().MustFerry(t, args...)
}

func temporalClient(t *testing.T) client.Client {
	t.Helper()
	return testEnv().TemporalClient(t)
}

func queryView(t *testing.T, c client.Client, name string) (*contract.View, error) {
	return e2etest.Query(c, name)
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	e2etest.Eventually(t, timeout, what, cond)
}
