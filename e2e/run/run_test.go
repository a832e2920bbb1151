package run

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs hack/run.sh on the real stack: run without -short")
	}
}

// TestRunTwiceOnOneStateDir: `make run` twice in a row on one state
// directory brings the demo app to Synced and Healthy each time. The first
// run is stopped with kill (SIGTERM to the script), the second with Ctrl-C
// (SIGINT to its process group, as a terminal sends it); after each, no
// process of it is left.
func TestRunTwiceOnOneStateDir(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()

	first := startScript(t, dir)
	first.waitRunning()
	first.requireDemoSyncedAndHealthy()
	first.requireFrontDoor()
	tree := first.tree()
	requireParts(t, tree)
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, first.wait(), "a stop asked for ends hack/run.sh with status 0")
	first.requireGone(tree)

	second := startScript(t, dir)
	second.waitRunning()
	second.requireDemoSyncedAndHealthy()
	tree = second.tree()
	requireParts(t, tree)
	require.NoError(t, syscall.Kill(-second.cmd.Process.Pid, syscall.SIGINT))
	require.NoError(t, second.wait(), "Ctrl-C ends hack/run.sh with status 0")
	second.requireGone(tree)
	require.Contains(t, second.output(), "stopping…")
}

// TestRunWithItsPortsTaken: with the worker's default ports (metrics 9090,
// webhook 9091) taken, hack/run.sh takes others, says which, and the worker
// serves on them.
func TestRunWithItsPortsTaken(t *testing.T) {
	skipShort(t)
	for _, port := range []string{"9090", "9091"} {
		l, err := net.Listen("tcp", "127.0.0.1:"+port)
		if errors.Is(err, syscall.EADDRINUSE) {
			continue // taken already, as on the machine of the issue
		}
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
	}

	s := startScript(t, t.TempDir())
	s.waitRunning()
	out := s.output()
	metrics := regexp.MustCompile(`metrics port 9090 is taken: using (\d+)`).FindStringSubmatch(out)
	webhook := regexp.MustCompile(`webhook port 9091 is taken: using (\d+)`).FindStringSubmatch(out)
	require.NotNil(t, metrics, "hack/run.sh says which metrics port it took:\n%s", out)
	require.NotNil(t, webhook, "hack/run.sh says which webhook port it took:\n%s", out)
	require.NotEqual(t, metrics[1], webhook[1])
	require.Contains(t, out, "http://127.0.0.1:"+metrics[1]+"/metrics")
	require.Contains(t, out, "http://127.0.0.1:"+webhook[1]+"/api/webhook")

	body := httpGet(t, "http://127.0.0.1:"+metrics[1]+"/metrics")
	require.Contains(t, body, "temporal_", "the worker serves its metrics on the port hack/run.sh printed")
	// The webhook answers a GET with 405: it is the worker's endpoint.
	resp, err := http.Get("http://127.0.0.1:" + webhook[1] + "/api/webhook")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	tree := s.tree()
	require.NoError(t, syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT))
	require.NoError(t, s.wait())
	s.requireGone(tree)
}

// TestRunStopsWhenTheWorkerDies: a worker that cannot start (here: the CA
// bundle its environment names is missing) makes hack/run.sh say so with
// the end of the worker's log and exit non-zero, stopping the stack,
// instead of waiting.
func TestRunStopsWhenTheWorkerDies(t *testing.T) {
	skipShort(t)
	missing := filepath.Join(t.TempDir(), "no-such-ca.pem")
	s := startScript(t, t.TempDir(), "FERRY_TEMPORAL_TLS_CA="+missing)
	require.False(t, s.waitOutput("Ferry is running."), "hack/run.sh must not run with its worker dead")
	err := s.wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 1, exit.ExitCode())
	out := s.output()
	require.Contains(t, out, "ferry: ferry-worker exited (status 1); the end of its log "+filepath.Join(s.dir, "worker.log"))
	require.Contains(t, out, "read CA bundle (--temporal-tls-ca): open "+missing, "the worker's own error is quoted")
	require.Empty(t, s.marked(), "nothing of the stack is left")
}

// TestApplyWithoutWorker: `ferry app apply` against a Temporal server where
// no worker polls the task queue ferry returns an error that names the
// queue and what to start, instead of waiting for ever.
func TestApplyWithoutWorker(t *testing.T) {
	skipShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), startBound)
	defer cancel()
	stack, err := devenv.Start(ctx, devenv.Options{Regions: []string{}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, stack.Stop()) })

	file := filepath.Join(t.TempDir(), "guestbook.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
spec:
  source:
    repoURL: `+stack.GitURL+`/guestbook.git
    targetRevision: main
    path: guestbook
  destination:
    name: `+region+`
    namespace: guestbook
`), 0o644))
	ctx, cancel = context.WithTimeout(context.Background(), stopBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(ferryBin(t), "ferry"), "app", "apply", "-f", file)
	cmd.Env = append(stack.Environ(), "FERRY_REGIONS="+region)
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "ferry app apply must not wait for ever: %s", out)
	require.Error(t, err, "%s", out)
	require.Contains(t, string(out), `app "guestbook": apply: no worker is polling task queue ferry: start ferry-worker --control`)
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %s", url, b)
	return string(b)
}
