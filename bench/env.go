package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/ferry-gitops/ferry/internal/devenv"
)

// Env is one running stack and what the scenarios need around it.
type Env struct {
	Cfg      *Config
	Stack    *devenv.Stack
	Temporal client.Client
	// Dir is scratch space for working copies and app files.
	Dir string

	cleanups []func()
	repos    map[int]*sizedRepo
}

// startEnv starts a stack of opts (regions, Temporal, control cluster) and
// connects to its Temporal.
func startEnv(ctx context.Context, cfg *Config, opts devenv.Options) (*Env, error) {
	began := time.Now()
	if opts.Temporal == "" {
		opts.Temporal = devenv.TemporalDev
	}
	control := ""
	if opts.Control {
		control = ", a control cluster"
	}
	cfg.logf("starting the stack: regions %s, Temporal %s%s", strings.Join(opts.Regions, ","), opts.Temporal, control)
	opts.ToolsBin, opts.Log = cfg.ToolsBin, prefixed(cfg.Log, "  ")
	s, err := devenv.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, client.Options{
		HostPort: s.TemporalAddress, Namespace: s.Namespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
	})
	if err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("connect to Temporal at %s: %w", s.TemporalAddress, err)
	}
	dir := filepath.Join(s.StateDir, "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.Close()
		_ = s.Stop()
		return nil, err
	}
	cfg.logf("stack ready in %s (state %s)", time.Since(began).Round(100*time.Millisecond), s.StateDir)
	return &Env{Cfg: cfg, Stack: s, Temporal: c, Dir: dir}, nil
}

func (e *Env) stop() {
	for i := len(e.cleanups) - 1; i >= 0; i-- {
		e.cleanups[i]()
	}
	e.Temporal.Close()
	if err := e.Stack.Stop(); err != nil {
		e.Cfg.logf("stop the stack: %v", err)
	}
}

func (e *Env) logf(format string, args ...any) { e.Cfg.logf(format, args...) }

// tempDir makes a fresh directory under e.Dir.
func (e *Env) tempDir(prefix string) (string, error) {
	return os.MkdirTemp(e.Dir, prefix+"-")
}

// prefixed writes each line of w with a prefix, for the stack's progress.
func prefixed(w io.Writer, prefix string) io.Writer {
	if w == nil {
		return io.Discard
	}
	return &prefixWriter{w: w, prefix: prefix}
}

type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line == "" {
			continue
		}
		if _, err := io.WriteString(p.w, p.prefix+line); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
