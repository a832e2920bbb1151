package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestMain makes the test binary a renderer too: the Renderer tests run
// it in its render mode inside the sandboxes, as the worker runs itself.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == RenderArg {
		if err := Serve(context.Background(), os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The runsc of the tools cache (hack/tools.sh), as the stack's workers.
	if bin := os.Getenv("FERRY_TOOLS_BIN"); bin != "" {
		_ = os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	os.Exit(m.Run())
}

// forEachSandbox runs fn with a Runner of each sandboxed mode, skipping a
// mode whose tool is not installed (.ci/run installs both).
func forEachSandbox(t *testing.T, fn func(t *testing.T, r Runner)) {
	for _, mode := range []Mode{ModeGVisor, ModeProcess} {
		t.Run(string(mode), func(t *testing.T) {
			tool := map[Mode]string{ModeGVisor: "runsc", ModeProcess: "bwrap"}[mode]
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s is not installed (Debian package %s; .ci/run installs it): the %s sandbox is not tested", tool,
					map[Mode]string{ModeGVisor: "runsc", ModeProcess: "bubblewrap"}[mode], mode)
			}
			r, err := New(mode, t.TempDir(), GVisor{})
			if err != nil {
				t.Fatal(err)
			}
			fn(t, r)
		})
	}
}

// shellMounts give a sandbox the host's shell and tools, read-only.
func shellMounts(extra ...Mount) []Mount {
	ms := []Mount{{Source: "/usr", Target: "/usr"}, {Source: "/bin", Target: "/bin"}}
	for _, m := range SystemMounts() {
		if !strings.HasPrefix(m.Target, "/usr/") {
			ms = append(ms, m)
		}
	}
	return append(ms, extra...)
}

func shell(t *testing.T, r Runner, script string, mounts ...Mount) *Result {
	t.Helper()
	res, err := r.Run(context.Background(), Spec{
		Args: []string{"/bin/bash", "-c", script}, Env: []string{"PATH=/usr/bin:/bin", "HOME=/tmp"},
		Mounts: shellMounts(mounts...),
	})
	if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	return res
}

// TestSandboxSeesNothingOfTheWorker runs commands in each sandbox that try
// to read what the worker can: its environment, a service-account token,
// another app's checkout, the host's /proc; and to reach a loopback
// listener.
func TestSandboxSeesNothingOfTheWorker(t *testing.T) {
	const token = "ferry-test-token-2f0c1d"
	t.Setenv("FERRY_GIT_TOKEN", token)
	secrets := t.TempDir()
	tokenFile := filepath.Join(secrets, "token")
	checkout := filepath.Join(t.TempDir(), "app-a")
	other := filepath.Join(t.TempDir(), "app-b")
	for file, content := range map[string]string{
		tokenFile:                           token,
		filepath.Join(checkout, "app.yaml"): "kind: ConfigMap\n",
		filepath.Join(other, "secret.yaml"): token,
	} {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		src := Mount{Source: checkout, Target: "/src"}
		res := shell(t, r, "cat /src/app.yaml", src)
		if res.ExitCode != 0 || string(res.Stdout) != "kind: ConfigMap\n" {
			t.Fatalf("the sandbox cannot read its own checkout: status %d, %q, %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		for _, script := range []string{
			"env", "cat /proc/1/environ", "cat /proc/*/environ",
			"cat " + tokenFile, "cat " + filepath.Join(other, "secret.yaml"), "ls -R " + filepath.Dir(other),
		} {
			res := shell(t, r, script, src)
			if out := string(res.Stdout) + string(res.Stderr); strings.Contains(out, token) {
				t.Errorf("%q in the %s sandbox read the worker's secret: %s", script, r.Mode(), out)
			}
			if strings.HasPrefix(script, "cat /") && script != "cat /proc/1/environ" && script != "cat /proc/*/environ" && res.ExitCode == 0 {
				t.Errorf("%q in the %s sandbox succeeded: %q", script, r.Mode(), res.Stdout)
			}
		}

		// Each connection says who made it; the listener reads it to the
		// end. The accept queue is first in, first out: once the host's
		// connection, made after the sandbox's command ended, has been
		// read, any the sandbox made has been accepted before it.
		var accepted atomic.Int64
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done, fromHost := make(chan struct{}), make(chan struct{})
		var fromSandbox atomic.Int64
		go func() {
			defer close(done)
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				accepted.Add(1)
				said, _ := io.ReadAll(c)
				c.Close()
				switch strings.TrimSpace(string(said)) {
				case "host":
					close(fromHost)
				default:
					fromSandbox.Add(1)
				}
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		connect := func(who string) string { return fmt.Sprintf("echo %s > /dev/tcp/127.0.0.1/%d", who, port) }
		res = shell(t, r, connect("sandbox"), src)
		if res.ExitCode == 0 {
			t.Errorf("%q in the %s sandbox succeeded", connect("sandbox"), r.Mode())
		}
		// The same command outside the sandbox does connect: the
		// listener counts connections.
		if out, err := exec.Command("bash", "-c", connect("host")).CombinedOutput(); err != nil {
			t.Fatalf("%q on the host: %v: %s", connect("host"), err, out)
		}
		select {
		case <-fromHost:
		case <-time.After(time.Minute):
			t.Error("the listener never read the host's connection")
		}
		ln.Close()
		<-done
		if n := accepted.Load(); n != 1 || fromSandbox.Load() != 0 {
			t.Errorf("the listener saw %d connections, %d not the host's; want only the host's one", n, fromSandbox.Load())
		}
	})
}

// TestSandboxStopsAtTheOutputLimit stops a command that writes more than
// Limits.Stdout.
func TestSandboxStopsAtTheOutputLimit(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, r Runner) {
		res, err := r.Run(context.Background(), Spec{
			Args: []string{"/bin/bash", "-c", "yes ferry"}, Env: []string{"PATH=/usr/bin:/bin"},
			Mounts: shellMounts(), Limits: Limits{Stdout: 64 << 10},
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.StdoutOverflow || len(res.Stdout) != 64<<10 {
			t.Fatalf("overflow %v, %d bytes kept; want an overflow at 64 KiB", res.StdoutOverflow, len(res.Stdout))
		}
	})
}

// TestSandboxTimeoutCleansUp ends a command that outlives its context:
// Run returns the context's error, and nothing of the sandbox is left (no
// runsc container, no bundle).
func TestSandboxTimeoutCleansUp(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, r Runner) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := r.Run(ctx, Spec{Args: []string{"/bin/bash", "-c", "sleep 60"}, Env: []string{"PATH=/usr/bin:/bin"}, Mounts: shellMounts()})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
		g, ok := r.(*gvisor)
		if !ok {
			return
		}
		out, err := exec.Command(g.runsc, "--root", g.root, "list", "-quiet").CombinedOutput()
		if err != nil {
			t.Fatalf("runsc list: %v: %s", err, out)
		}
		if s := strings.TrimSpace(string(out)); s != "" {
			t.Errorf("containers left after a timeout: %s", s)
		}
		if left, _ := os.ReadDir(g.bundles); len(left) != 0 {
			t.Errorf("%d bundles left after a timeout", len(left))
		}
	})
}

// TestSandboxWritesOnlyTmp: the root and the mounts are read-only, /tmp is
// writable up to Limits.Tmpfs.
func TestSandboxWritesOnlyTmp(t *testing.T) {
	checkout := t.TempDir()
	forEachSandbox(t, func(t *testing.T, r Runner) {
		src := Mount{Source: checkout, Target: "/src"}
		for _, script := range []string{"touch /x", "mkdir /dev/x", "touch /src/x", "touch /usr/x", "head -c 100000000 /dev/zero > /tmp/big"} {
			if res := shell(t, r, script, src); res.ExitCode == 0 {
				t.Errorf("%q in the %s sandbox succeeded", script, r.Mode())
			}
		}
		if res := shell(t, r, "head -c 1000000 /dev/zero > /tmp/small && wc -c < /tmp/small", src); res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "1000000" {
			t.Errorf("writing 1 MB to /tmp in the %s sandbox: status %d, %q %s", r.Mode(), res.ExitCode, res.Stdout, res.Stderr)
		}
		if entries, _ := os.ReadDir(checkout); len(entries) != 0 {
			t.Errorf("the sandbox wrote %d files into the checkout", len(entries))
		}
	})
}
