package devenv

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testStartTimeout bounds Start in RunTests; a cold tools build is not
// counted (it runs before, and only without FERRY_TOOLS_BIN).
const testStartTimeout = 5 * time.Minute

// RunTests starts one stack for a test package, runs its tests and stops the
// stack, also on SIGINT or SIGTERM. Use it from TestMain:
//
//	func TestMain(m *testing.M) {
//		os.Exit(devenv.RunTests(m, devenv.Options{Regions: []string{"us-east-1"}}, &stack))
//	}
//
// Progress goes to stderr with -v, otherwise only when the start fails. The
// stack is always real: a test that needs it never silently skips.
// FERRY_TEMPORAL=cluster runs the tests against a Temporal cluster
// (Options.Temporal) when opts does not choose. FERRY_TEST_SHARD=K/N runs
// the K-th of N shares of the package's tests (ShardEnv).
func RunTests(m *testing.M, opts Options, stack **Stack) int {
	if !flag.Parsed() {
		flag.Parse()
	}
	if err := applyShard(os.Getenv(ShardEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "devenv:", err)
		return 1
	}
	if opts.Temporal == "" {
		opts.Temporal = TemporalMode(os.Getenv("FERRY_TEMPORAL"))
	}
	var startLog bytes.Buffer
	if opts.Log == nil {
		if testing.Verbose() {
			opts.Log = os.Stderr
		} else {
			opts.Log = &startLog
		}
	}

	// A signal during Start cancels it; during the tests it stops the stack
	// and ends the process, since m.Run cannot be interrupted.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	ctx, cancel := context.WithTimeout(context.Background(), testStartTimeout)
	defer cancel()

	var (
		mu      sync.Mutex
		current *Stack
	)
	go func() {
		sig, ok := <-signals
		if !ok {
			return
		}
		cancel()
		mu.Lock()
		s := current
		mu.Unlock()
		if s != nil {
			fmt.Fprintf(os.Stderr, "devenv: %s: stopping the stack\n", sig)
			if err := s.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "devenv:", err)
			}
			os.Exit(130)
		}
	}()

	s, err := Start(ctx, opts)
	if err != nil {
		_, _ = io.Copy(os.Stderr, &startLog)
		fmt.Fprintf(os.Stderr, "devenv: start the stack for the tests: %v\n", err)
		return 1
	}
	mu.Lock()
	current = s
	mu.Unlock()
	*stack = s

	code := m.Run()

	pids := s.Pids()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "devenv:", err)
		code = max(code, 1)
	}
	if left := Alive(pids); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "devenv: processes left after Stop: %v\n", left)
		code = max(code, 1)
	}
	return code
}

// Alive returns the entries of pids whose process group still has a
// process: after Stop it must be empty.
func Alive(pids map[string]int) map[string]int {
	left := map[string]int{}
	for name, pid := range pids {
		if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
			left[name] = pid
		}
	}
	return left
}
