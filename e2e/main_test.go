// Package e2e runs Ferry end to end on the real local stack: the Temporal dev
// server, a control plane per region, Redis and the Git server, with the
// ferry and ferry-worker binaries as a user runs them.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/ferry-gitops/ferry/internal/devenv"
	"github.com/ferry-gitops/ferry/workflows"
)

var (
	stack  *devenv.Stack
	binDir string
)

var regions = []string{"us-east-1", "eu-west-1"}

func TestMain(m *testing.M) {
	os.Exit(devenv.RunTests(m, devenv.Options{Regions: regions}, &stack))
}

// bin returns the path of a Ferry binary: from FERRY_BIN (make test builds
// them), else built once into a temp dir.
func bin(t *testing.T, name string) string {
	t.Helper()
	if dir := os.Getenv("FERRY_BIN"); dir != "" {
		return filepath.Join(dir, name)
	}
	if binDir == "" {
		binDir = t.TempDir()
		for n, pkg := range map[string]string{"ferry": "../starter", "ferry-worker": "../worker"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, n), pkg).CombinedOutput()
			require.NoError(t, err, "go build %s: %s", pkg, out)
		}
	}
	return filepath.Join(binDir, name)
}

func env() []string {
	return append(os.Environ(),
		"TEMPORAL_ADDRESS="+stack.TemporalAddress,
		"FERRY_REGIONS="+strings.Join(regions, ","),
		"KUBECONFIG="+stack.Kubeconfig,
	)
}

// worker is a ferry-worker process serving the control queue and every region.
type worker struct {
	cmd *exec.Cmd
	log string
}

func startWorker(t *testing.T, extra ...string) *worker {
	t.Helper()
	return startWorkerEnv(t, nil, extra...)
}

// startWorkerEnv is startWorker with extra environment variables (NAME=value).
func startWorkerEnv(t *testing.T, extraEnv []string, extra ...string) *worker {
	t.Helper()
	args := []string{"--control"}
	for _, r := range regions {
		args = append(args, "--region", r)
	}
	return startWorkerWithEnv(t, extraEnv, append(args, extra...)...)
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
	args := []string{"--regions", strings.Join(regions, ","), "--temporal-address", stack.TemporalAddress,
		"--kubeconfig", stack.Kubeconfig, "--redis-addr", stack.RedisAddr, "--cache-dir", t.TempDir(), "--metrics-addr", ""}
	args = append(args, roles...)
	log := filepath.Join(stack.StateDir, "logs", fmt.Sprintf("worker-%s-%d.log", sanitize(t.Name()), time.Now().UnixNano()))
	f, err := os.Create(log)
	require.NoError(t, err)
	cmd := exec.Command(bin(t, "ferry-worker"), args...)
	cmd.Env = append(env(), extraEnv...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	w := &worker{cmd: cmd, log: log}
	t.Cleanup(func() { w.stop(); f.Close() })
	return w
}

func (w *worker) stop() {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = w.cmd.Process.Kill()
		<-done
	}
}

// kill9 kills the worker the hard way, as a crashed machine would.
func (w *worker) kill9() {
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	_ = w.cmd.Wait()
}

// ferry runs the ferry CLI and returns its combined output.
func ferry(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin(t, "ferry"), args...)
	cmd.Env = env()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func mustFerry(t *testing.T, args ...string) string {
	t.Helper()
	out, err := ferry(t, args...)
	require.NoError(t, err, "ferry %s: %s", strings.Join(args, " "), out)
	return out
}

func temporalClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: stack.TemporalAddress})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func queryView(t *testing.T, c client.Client, name string) (*workflows.View, error) {
	res, err := c.QueryWorkflow(context.Background(), workflows.WorkflowID(name), "", workflows.QueryStatus)
	if err != nil {
		return nil, err
	}
	var v workflows.View
	return &v, res.Get(&v)
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not reached after %s; last state: %s", what, timeout, last)
}

func sanitize(s string) string { return strings.NewReplacer("/", "_", " ", "_").Replace(s) }
