package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ferry-gitops/ferry/internal/defaults"
)

// Mode is how renders are isolated from the worker.
type Mode string

const (
	// ModeGVisor runs every render in a gVisor sandbox (runsc).
	ModeGVisor Mode = "gvisor"
	// ModeProcess runs every render in a bwrap child with its own
	// namespaces and rlimits.
	ModeProcess Mode = "process"
	// ModeNone renders in the worker's own process: for development only.
	ModeNone Mode = "none"
	// ModePod renders in the worker's own process, which gVisor runs: the
	// worker's whole pod is the sandbox (a pod of RuntimeClass gvisor,
	// deploy/). A worker refuses it where gVisor does not run it
	// (UnderGVisor).
	ModePod Mode = "pod"
)

// Modes are the modes in the order DefaultMode prefers them.
var Modes = []Mode{ModeGVisor, ModeProcess, ModeNone}

// ParseMode reads a --render-sandbox value.
func ParseMode(s string) (Mode, error) {
	for _, m := range append(Modes, ModePod) {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("%q is not a render sandbox: write gvisor, process, pod or none", s)
}

// DefaultMode is gvisor where runsc (the executable runsc names, "" for
// runsc on PATH) is, else process where bwrap is on PATH, else an error
// saying what to install or choose.
func DefaultMode(runsc string) (Mode, error) {
	if runsc == "" {
		runsc = "runsc"
	}
	if _, err := exec.LookPath(runsc); err == nil {
		return ModeGVisor, nil
	}
	if _, err := exec.LookPath("bwrap"); err == nil {
		return ModeProcess, nil
	}
	return "", errors.New("no render sandbox available: install runsc (gVisor, Debian package runsc) or bwrap (Debian package bubblewrap), " +
		"or give --render-sandbox none to render in the worker's own process (development only: a commit can then exhaust or read the worker)")
}

// Mount is a host path visible read-only inside the sandbox.
type Mount struct {
	Source string // on the host; must exist
	Target string // inside the sandbox, absolute
	// Sockets says that the directory holds Unix sockets of the host's
	// that the command connects to (an egress proxy's): gVisor lets a
	// sandbox connect to a host's socket only when told (--host-uds).
	Sockets bool
}

// Scratch is a tmpfs of Size bytes at Target inside the sandbox.
type Scratch struct {
	Target string
	Size   int64
}

// Spec is one command to run in a sandbox.
type Spec struct {
	// Args is the argv; Args[0] is a path inside the sandbox.
	Args []string
	// Env is the whole environment ("K=V"); nothing of the worker's is
	// added.
	Env []string
	// Dir is the working directory inside the sandbox; "" means /tmp.
	Dir string
	// Mounts are the read-only binds; /tmp is a tmpfs of Limits.Tmpfs.
	Mounts []Mount
	// Scratch are more tmpfs mounts, writable by the sandbox's user, each
	// of its own size; like /tmp they hold what is written to them in the
	// sandbox's memory.
	Scratch []Scratch
	// Stdin is given to the command.
	Stdin []byte
	// Limits bound the run.
	Limits Limits
	// AnswerLine says that the first line the command writes on stdout is
	// its whole answer: a run ends once that line is written, with exit
	// status 0, and does not wait for the sandbox to end (it is destroyed
	// after the run as always). A command that exits without one ends the
	// run as any other does.
	AnswerLine bool
	// ReadyLine says that the command writes one line on stdout, not part
	// of its output, once it is ready for its stdin (a pooled renderer,
	// after its warm-up): Sandbox.Ready is closed then. Without it, a
	// sandbox is ready once started.
	ReadyLine bool
}

// Limits bound one run. A zero field takes its default.
type Limits struct {
	// Memory is the most memory the sandbox may use. Default 1 GiB.
	Memory int64
	// CPUTime is the most CPU time, summed over threads. Default 3 min.
	CPUTime time.Duration
	// Tmpfs is the size of /tmp, the only writable place; it also bounds
	// any one file written. Default 64 MiB.
	Tmpfs int64
	// Stdout is the most output kept; a command writing more is stopped.
	// Default 64 MiB.
	Stdout int64
	// Stderr is the most error output kept (the rest is dropped). Default
	// 64 KiB.
	Stderr int64
}

// DefaultLimits are the limits of a zero Limits.
func DefaultLimits() Limits {
	return Limits{Memory: 1 << 30, CPUTime: 3 * time.Minute, Tmpfs: 64 << 20, Stdout: 64 << 20, Stderr: 64 << 10}
}

func (l Limits) withDefaults() Limits {
	return defaults.Positive(l, DefaultLimits())
}

// Result is how a run ended.
type Result struct {
	Stdout []byte
	Stderr []byte // at most Limits.Stderr bytes
	// ExitCode is the command's exit status; 128+n when a signal n ended
	// it.
	ExitCode int
	// OutOfMemory is true when the run hit Limits.Memory.
	OutOfMemory bool
	// StdoutOverflow is true when the command wrote more than
	// Limits.Stdout and was stopped.
	StdoutOverflow bool
}

// Runner runs commands in sandboxes, a fresh one per run. Run returns an
// error when the sandbox could not be made or ctx ended (ctx's error,
// wrapped); a command that ran and failed is a Result with its exit code.
type Runner interface {
	Mode() Mode
	Run(ctx context.Context, spec Spec) (*Result, error)
}

// New returns the Runner of mode; gVisor keeps its state and bundles under
// stateDir and runs the runsc gv says. ModeNone has no Runner.
func New(mode Mode, stateDir string, gv GVisor) (Runner, error) {
	switch mode {
	case ModeGVisor:
		return newGVisor(stateDir, gv)
	case ModeProcess:
		return newProcess()
	case ModeNone, ModePod:
		return nil, fmt.Errorf("render sandbox %s runs no sandbox of its own", mode)
	}
	return nil, fmt.Errorf("unknown render sandbox %q", mode)
}

// SystemMounts are the host directories a dynamically linked program
// needs (its loader and libraries), those that exist.
func SystemMounts() []Mount {
	var out []Mount
	for _, dir := range []string{"/lib", "/lib64", "/usr/lib", "/usr/lib64"} {
		if _, err := os.Stat(dir); err == nil {
			out = append(out, Mount{Source: dir, Target: dir})
		}
	}
	return out
}

// runID names one run uniquely: containers, bundles.
func runID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "ferry-" + hex.EncodeToString(b)
}

func checkSpec(spec Spec) error {
	if len(spec.Args) == 0 || !filepath.IsAbs(spec.Args[0]) {
		return fmt.Errorf("sandbox: argv[0] must be an absolute path inside the sandbox, got %q", spec.Args)
	}
	for _, m := range spec.Mounts {
		if !filepath.IsAbs(m.Target) || !filepath.IsAbs(m.Source) {
			return fmt.Errorf("sandbox: mount %s on %s: both paths must be absolute", m.Source, m.Target)
		}
		if m.Target == "/tmp" || strings.HasPrefix(m.Target, "/proc") {
			return fmt.Errorf("sandbox: mount on %s: the sandbox owns that path", m.Target)
		}
	}
	for _, m := range spec.Scratch {
		if !filepath.IsAbs(m.Target) || m.Target == "/tmp" || strings.HasPrefix(m.Target, "/proc") || m.Size <= 0 {
			return fmt.Errorf("sandbox: tmpfs on %s of %d bytes: the path must be absolute, not the sandbox's own, and the size positive", m.Target, m.Size)
		}
	}
	return nil
}

// boundedBuffer keeps the first max bytes written; past them it keeps
// nothing more and calls over once. When line is not nil, it is closed
// once a newline has been written, and newline gets a token at each
// newline written (takeLine takes the lines, each bounded by max on its
// own). When ready is not nil, the first line written is not kept, and
// ready is called once it is whole.
type boundedBuffer struct {
	mu         sync.Mutex
	buf        bytes.Buffer
	max        int64
	overflow   bool
	over       func()
	line       chan struct{}
	lineClosed bool
	newline    chan struct{}
	ready      func()
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	written := len(p)
	if b.ready != nil {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return written, nil
		}
		b.ready()
		b.ready = nil
		if p = p[i+1:]; len(p) == 0 {
			return written, nil
		}
	}
	room := b.max - int64(b.buf.Len())
	if b.line != nil && int64(len(p)) <= room && bytes.IndexByte(p, '\n') >= 0 {
		// A whole line, all of it kept.
		if !b.lineClosed {
			b.lineClosed = true
			defer close(b.line)
		}
		select {
		case b.newline <- struct{}{}:
		default:
		}
	}
	if int64(len(p)) > room {
		b.buf.Write(p[:max(room, 0)])
		if !b.overflow {
			b.overflow = true
			if b.over != nil {
				b.over()
			}
		}
		return written, nil
	}
	b.buf.Write(p)
	return written, nil
}

// firstLine is what was written up to the first newline, included.
func (b *boundedBuffer) firstLine() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.buf.Bytes()
	if i := bytes.IndexByte(out, '\n'); i >= 0 {
		out = out[:i+1]
	}
	return bytes.Clone(out)
}

// takeLine takes the first line written and not taken yet, newline
// included; ok is false while no whole line is there.
func (b *boundedBuffer) takeLine() (line []byte, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := bytes.IndexByte(b.buf.Bytes(), '\n')
	if i < 0 || b.overflow {
		return nil, false
	}
	line = bytes.Clone(b.buf.Next(i + 1))
	if b.buf.Len() == 0 {
		b.buf.Reset()
	}
	return line, true
}

// reset forgets what was written so far.
func (b *boundedBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
	b.overflow = false
}

// bytes is what was written; the command must have ended.
func (b *boundedBuffer) bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes()
}

// exitCode reads the exit status of a finished command as a shell does:
// 128+n for a command a signal n ended. ok is false when err is not an
// exit status (the command did not run).
func exitCode(err error) (code int, ok bool) {
	if err == nil {
		return 0, true
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return 0, false
	}
	if ws, isWait := exit.Sys().(syscall.WaitStatus); isWait && ws.Signaled() {
		return 128 + int(ws.Signal()), true
	}
	return exit.ExitCode(), true
}
