// Package e2etest holds what the end-to-end test packages share: the Ferry
// binaries as a user runs them, worker processes, the CLI, Git repos on the
// stack's Git server, Application files, and waits on an app's status.
//
// A test package starts one stack in its TestMain (devenv.RunTests) and
// wraps it in an Env:
//
//	var stack *devenv.Stack
//
//	func TestMain(m *testing.M) {
//		os.Exit(devenv.RunTests(m, devenv.Options{Regions: regions}, &stack))
//	}
//
//	func env() *e2etest.Env { return &e2etest.Env{Stack: stack, Regions: regions} }
package e2etest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"k8s.io/client-go/kubernetes"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/devenv"
)

// Env is a test package's view of its stack.
type Env struct {
	Stack *devenv.Stack
	// Regions are the regions workers may serve and apps target; nil means
	// every region of the stack.
	Regions []string
	// CLIConfig is the ferry CLI's config file (FERRY_CONFIG), where
	// ferry login keeps its session; empty: one nobody logs in with.
	CLIConfig string
}

func (e *Env) regions() []string {
	if e.Regions != nil {
		return e.Regions
	}
	return e.Stack.Regions
}

var (
	buildMu  sync.Mutex
	builtDir string
)

// Bin returns the path of a Ferry binary (ferry, ferry-worker or
// ferry-render, which a worker renders with when it is beside it): in
// FERRY_BIN when set (make test builds them there), else built once per
// test binary into the stack's state dir, which goes with the stack.
func (e *Env) Bin(t testing.TB, name string) string {
	t.Helper()
	if dir := os.Getenv("FERRY_BIN"); dir != "" {
		return filepath.Join(dir, name)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if builtDir == "" {
		dir := filepath.Join(e.Stack.StateDir, "bin")
		for n, pkg := range map[string]string{"ferry": "starter", "ferry-worker": "worker", "ferry-render": "renderer", "ferry-server": "server"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(dir, n), "github.com/ferry-gitops/ferry/"+pkg).CombinedOutput()
			require.NoError(t, err, "go build %s: %s", pkg, out)
		}
		builtDir = dir
	}
	return filepath.Join(builtDir, name)
}

// Environ is the environment of the Ferry processes a test runs: with the
// stack's regions configuration (FERRY_REGIONS_CONFIG, as make run's) when
// the test uses all of the stack's regions.
func (e *Env) Environ() []string {
	// The tools bin dir first on PATH, as hack/run.sh's env file puts it:
	// workers run its runsc (hack/tools.sh builds a current one).
	env := append(os.Environ(),
		"PATH="+e.Stack.ToolsBin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TEMPORAL_ADDRESS="+e.Stack.TemporalAddress,
		"FERRY_REGIONS="+strings.Join(e.regions(), ","),
		"KUBECONFIG="+e.Stack.Kubeconfig,
		"FERRY_CACHE_KEY="+e.Stack.CacheKey,
		"FERRY_RENDER_ALLOW_HOSTS="+e.Stack.RenderAllowHosts(),
		// The CLI's logins (ferry login): the test's own, never the user's.
		"FERRY_CONFIG="+e.cliConfig(),
	)
	if e.Stack.RegionsConfig != "" && slices.Equal(e.regions(), e.Stack.Regions) {
		env = append(env, "FERRY_REGIONS_CONFIG="+e.Stack.RegionsConfig)
	}
	if e.Stack.ControlContext != "" { // a stack with a control cluster, as make run's
		env = append(env, "FERRY_CONTROL_CONTEXT="+e.Stack.ControlContext, "FERRY_CONTROL_NAMESPACE="+e.Stack.ControlNamespace)
	}
	return env
}

// cliConfig is the ferry CLI's config file of the test: CLIConfig, else
// one in the stack's state dir that no test logs in with.
func (e *Env) cliConfig() string {
	if e.CLIConfig != "" {
		return e.CLIConfig
	}
	return filepath.Join(e.Stack.StateDir, "ferry-cli-not-logged-in.json")
}

// Worker is a ferry-worker process.
type Worker struct {
	cmd  *exec.Cmd
	Log  string
	Args []string
}

// AllRoles are the arguments of a worker that serves the control queue and
// every region.
func (e *Env) AllRoles() []string {
	args := []string{"--control"}
	for _, r := range e.regions() {
		args = append(args, "--region", r)
	}
	return args
}

// StartWorker starts a worker connected to the stack that serves what args
// say (--control, --region …, and any other flag); it is stopped when the
// test ends. On failure the end of its log is logged.
func (e *Env) StartWorker(t *testing.T, args ...string) *Worker {
	t.Helper()
	return e.StartWorkerEnv(t, nil, args...)
}

// StartWorkerEnv is StartWorker with extra environment variables
// (NAME=value).
func (e *Env) StartWorkerEnv(t *testing.T, extraEnv []string, args ...string) *Worker {
	t.Helper()
	all := []string{"--regions", strings.Join(e.regions(), ","), "--temporal-address", e.Stack.TemporalAddress,
		"--kubeconfig", e.Stack.Kubeconfig, "--redis-addr", e.Stack.RedisAddr, "--cache-dir", t.TempDir()}
	all = append(all, args...)
	log := filepath.Join(e.Stack.LogDir, fmt.Sprintf("worker-%s-%d.log", sanitize(t.Name()), time.Now().UnixNano()))
	f, err := os.Create(log)
	require.NoError(t, err)
	cmd := exec.Command(e.Bin(t, "ferry-worker"), all...)
	cmd.Env = append(e.Environ(), extraEnv...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	w := &Worker{cmd: cmd, Log: log, Args: args}
	t.Cleanup(func() {
		w.Stop()
		f.Close()
		if t.Failed() {
			t.Logf("worker %d %v, log %s ends:\n%s", w.Pid(), args, log, tail(log, 40))
		}
	})
	return w
}

// Pid is the worker's process id: the Temporal SDK's default identity of
// the worker is "<pid>@<host>@".
func (w *Worker) Pid() int { return w.cmd.Process.Pid }

// Identity is the prefix of the worker's Temporal identity.
func (w *Worker) Identity() string { return fmt.Sprintf("%d@", w.Pid()) }

// Stop stops the worker with SIGTERM, killing it after 15 s.
func (w *Worker) Stop() {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = w.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Kill9 kills the worker the hard way, as a crashed machine would.
func (w *Worker) Kill9() {
	_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	_ = w.cmd.Wait()
}

// FerryCmd is the ferry CLI with args and the stack's environment, to run
// as the caller likes.
func (e *Env) FerryCmd(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(e.Bin(t, "ferry"), args...)
	cmd.Env = e.Environ()
	return cmd
}

// Ferry runs the ferry CLI and returns its combined output.
func (e *Env) Ferry(t testing.TB, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Bin(t, "ferry"), args...)
	cmd.Env = e.Environ()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// MustFerry is Ferry that fails the test on an error.
func (e *Env) MustFerry(t testing.TB, args ...string) string {
	t.Helper()
	out, err := e.Ferry(t, args...)
	require.NoError(t, err, "ferry %s: %s", strings.Join(args, " "), out)
	return out
}

// TemporalClient is a client of the stack's Temporal server, closed when
// the test ends.
func (e *Env) TemporalClient(t testing.TB) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: e.Stack.TemporalAddress, Namespace: e.Stack.Namespace})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// KubeClient is an admin client of a region's API server.
func (e *Env) KubeClient(t testing.TB, region string) kubernetes.Interface {
	t.Helper()
	cfg, err := e.Stack.RestConfig(region)
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

// Query answers an app's status query.
func Query(c client.Client, name string) (*contract.View, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return ferryclient.Query(ctx, c, name)
}

// Eventually polls cond until it holds, failing the test with cond's last
// state once timeout has passed.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
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

// WaitApp waits until the app is Synced and Healthy at sha ("": any
// revision) overall and in every region of the Env, and returns its status.
func (e *Env) WaitApp(t testing.TB, name, sha string, timeout time.Duration) *app.Status {
	t.Helper()
	c := e.TemporalClient(t)
	var st *app.Status
	Eventually(t, timeout, "app "+name+" Synced and Healthy at "+Short(sha), func() (bool, string) {
		v, err := Query(c, name)
		if err != nil {
			return false, err.Error()
		}
		st = &v.Status
		ok := v.Status.Sync.Status == app.SyncStatusSynced && v.Status.Health.Status == app.HealthHealthy &&
			(sha == "" || v.Status.Sync.Revision == sha)
		for _, r := range e.regions() {
			sum := v.Status.Regions[r]
			ok = ok && sum.Sync == app.SyncStatusSynced && sum.Health == app.HealthHealthy && (sha == "" || sum.Revision == sha)
		}
		return ok, Describe(&v.Status)
	})
	return st
}

// Describe is a one-line account of a status for failure messages.
func Describe(st *app.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s at %s", st.Sync.Status, st.Health.Status, Short(st.Sync.Revision))
	for _, r := range slices.Sorted(maps.Keys(st.Regions)) {
		sum := st.Regions[r]
		fmt.Fprintf(&b, "; %s %s/%s at %s", r, sum.Sync, sum.Health, Short(sum.Revision))
		if sum.Unreachable {
			b.WriteString(" Unreachable")
		}
		if sum.Message != "" {
			fmt.Fprintf(&b, " (%s)", sum.Message)
		}
	}
	if op := st.OperationState; op != nil {
		fmt.Fprintf(&b, "; operation %s %s: %s", op.ID, op.Phase, op.Message)
	}
	if ro := st.Rollout; ro != nil {
		fmt.Fprintf(&b, "; rollout stage %d/%d %s at %s: %s", ro.Stage, ro.Stages, ro.Phase, Short(ro.Revision), ro.Message)
	}
	for _, c := range st.Conditions {
		fmt.Fprintf(&b, "; condition %s: %s", c.Type, c.Message)
	}
	return b.String()
}

// WriteFile writes content to a new file in a temporary dir and returns
// its path.
func WriteFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// Short is the first 8 characters of a SHA.
func Short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func sanitize(s string) string { return strings.NewReplacer("/", "_", " ", "_").Replace(s) }

// tail returns the last n lines of a file (at most its last 16 KiB).
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(data) > 16<<10 {
		data = data[len(data)-16<<10:]
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
