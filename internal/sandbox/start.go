package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Sandbox is one started sandbox: its command runs and waits for its
// stdin. It serves one run (Finish), or a series of requests each
// answered by a line (Ask), and is then destroyed.
type Sandbox interface {
	// Finish gives the command stdin, closes it, and waits for the command
	// to end, as Runner.Run does; ctx bounds only this wait, and a command
	// still running when it ends is killed. The caller destroys the
	// sandbox afterwards (in the background if it likes: what remains is
	// only the sandbox's state); a sandbox serves one Finish.
	Finish(ctx context.Context, stdin io.WriterTo) (*Result, error)
	// Ask writes one request to the command's stdin, which stays open,
	// and waits for the next line of its stdout, the request's answer
	// (the spec's AnswerLine): Result.Stdout is that line. A command that
	// ends first ends the run as in Finish. ctx bounds only this wait;
	// the command is killed when it ends first. Asks follow one another.
	Ask(ctx context.Context, stdin io.WriterTo) (*Result, error)
	// Alive tells whether the command still waits (it did not die while
	// idle).
	Alive() bool
	// Ready is closed once the command is ready for its stdin (at once
	// unless the spec's ReadyLine) or has ended: a caller that waits on
	// it checks Alive afterwards.
	Ready() <-chan struct{}
	// Destroy ends the command if it still runs and removes everything of
	// the sandbox; it is safe to call more than once.
	Destroy()
}

// Starter is a Runner that can start a sandbox ahead of its run, so that
// a run does not pay the start (Pool). Both sandboxed modes are Starters;
// Run is Start and Finish.
type Starter interface {
	Runner
	// Start starts spec's command in a fresh sandbox; spec.Stdin is
	// ignored (Finish gives it).
	Start(spec Spec) (Sandbox, error)
}

// started is a Sandbox of either mode: a host command (runsc run, or
// prlimit and bwrap) whose stdin is a pipe.
type started struct {
	cmd            *exec.Cmd
	stdin          io.WriteCloser
	stdout, stderr *boundedBuffer
	kill           context.CancelFunc
	done           chan struct{}
	waitErr        error // cmd.Wait's, once done is closed
	ready          chan struct{}
	readyOnce      sync.Once
	// result reads how the command ended, as the mode understands it.
	result func(res *Result, waitErr error) (*Result, error)
	// cleanup removes the sandbox's state after the command ended.
	cleanup func()
	once    sync.Once
}

// launch starts name args with stdin a pipe and stdout and stderr bounded
// by l, in a process group of its own; a worker that dies takes the
// command with it (Pdeathsig). stop,
// when not nil, ends the command when the sandbox is to end (a timeout,
// Destroy) instead of SIGKILL, which follows if the command has not
// exited within its WaitDelay. prepare, when not nil, adds to the
// command before it starts; what it returns is called once it started or
// failed to.
func launch(name string, args, env []string, spec Spec, l Limits, result func(*Result, error) (*Result, error), stop func(*exec.Cmd) error,
	prepare func(*exec.Cmd) (func(), error), cleanup func()) (*started, error) {
	ctx, kill := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	if stop != nil {
		cmd.Cancel = func() error { return stop(cmd) }
	}
	// A signal to the worker's process group (Ctrl-C in its terminal) is
	// the worker's to act on: runsc run, caught by one while it started a
	// sandbox, died with a child that had not yet left the group, which
	// then had no parent to reap it but the host's init.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		kill()
		cleanup()
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	growPipe(stdin)
	s := &started{cmd: cmd, stdin: stdin, kill: kill, done: make(chan struct{}), ready: make(chan struct{}), result: result, cleanup: cleanup,
		stdout: &boundedBuffer{max: l.Stdout, over: kill}, stderr: &boundedBuffer{max: l.Stderr}}
	if spec.AnswerLine {
		s.stdout.line, s.stdout.newline = make(chan struct{}), make(chan struct{}, 1)
	}
	if spec.ReadyLine {
		s.stdout.ready = s.setReady
	} else {
		s.setReady()
	}
	cmd.Stdout, cmd.Stderr = s.stdout, s.stderr
	// The sandbox's processes may hold the pipes after the command is
	// killed; cleanup ends them.
	cmd.WaitDelay = 5 * time.Second
	if prepare != nil {
		startedOrNot, err := prepare(cmd)
		if err != nil {
			_ = stdin.Close()
			kill()
			cleanup()
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		defer startedOrNot()
	}
	if err := cmd.Start(); err != nil {
		kill()
		cleanup()
		return nil, fmt.Errorf("sandbox: start %s: %w", name, err)
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
		s.setReady()
	}()
	return s, nil
}

func (s *started) setReady() { s.readyOnce.Do(func() { close(s.ready) }) }

func (s *started) Ready() <-chan struct{} { return s.ready }

// pipeSize is the size asked of a sandbox's stdin pipe, Linux's default
// most (fs.pipe-max-size): a render's request and checkout reach the
// renderer in a few reads rather than one per 64 KiB.
const pipeSize = 1 << 20

// growPipe makes the pipe w pipeSize large, where the kernel allows;
// where it does not, the pipe stays as it is.
func growPipe(w io.Writer) {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, pipeSize)
	}
}

func (s *started) Finish(ctx context.Context, stdin io.WriterTo) (*Result, error) {
	stop := context.AfterFunc(ctx, s.kill)
	defer stop()
	go func() {
		// A command that died does not read: the write fails, and its exit
		// says why.
		_, _ = stdin.WriteTo(s.stdin)
		_ = s.stdin.Close()
	}()
	select {
	case <-s.done:
	case <-s.stdout.line: // nil unless the spec's AnswerLine
		if ctx.Err() == nil {
			// The answer is whole: the sandbox's end is Destroy's.
			return s.result(&Result{Stdout: s.stdout.firstLine()}, nil)
		}
		<-s.done
	}
	return s.ended(ctx)
}

// ended is the Result of a command that ended, as its mode reads it.
func (s *started) ended(ctx context.Context) (*Result, error) {
	if ctx.Err() != nil {
		return nil, fmt.Errorf("sandbox: %w", ctx.Err())
	}
	res := &Result{Stdout: s.stdout.bytes(), Stderr: s.stderr.bytes(), StdoutOverflow: s.stdout.overflow}
	code, ok := exitCode(s.waitErr)
	if !ok && !s.stdout.overflow {
		return nil, fmt.Errorf("sandbox: run %s: %w", s.cmd.Path, s.waitErr)
	}
	res.ExitCode = code
	return s.result(res, s.waitErr)
}

func (s *started) Ask(ctx context.Context, stdin io.WriterTo) (*Result, error) {
	if s.stdout.newline == nil {
		return nil, errors.New("sandbox: Ask needs a spec with AnswerLine")
	}
	stop := context.AfterFunc(ctx, s.kill)
	defer stop()
	// A command that ends during this request is judged by what it wrote
	// since (a renderer killed for its memory may write nothing), and
	// each request's error output has the bound to itself.
	s.stderr.reset()
	// The renderer reads the whole request before it answers; a command
	// that died does not read, and its end says why.
	go func() { _, _ = stdin.WriteTo(s.stdin) }()
	for {
		if line, ok := s.stdout.takeLine(); ok && ctx.Err() == nil {
			return s.result(&Result{Stdout: line}, nil)
		}
		select {
		case <-s.done:
			if line, ok := s.stdout.takeLine(); ok && ctx.Err() == nil {
				return s.result(&Result{Stdout: line}, nil)
			}
			return s.ended(ctx)
		case <-s.stdout.newline:
		}
	}
}

func (s *started) Alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// answerGrace is how long Destroy lets a command that gave its answer
// line end by itself before it ends it.
var answerGrace = 10 * time.Second

func (s *started) Destroy() {
	s.once.Do(func() {
		// A renderer between requests (Ask) ends at the end of its stdin.
		_ = s.stdin.Close()
		if s.stdout.line != nil {
			select {
			case <-s.stdout.line:
				select {
				case <-s.done:
				case <-time.After(answerGrace):
				}
			default:
			}
		}
		s.kill()
		<-s.done
		s.cleanup()
	})
}

// runStarted is Runner.Run on a Starter: a sandbox started for the one run.
func runStarted(ctx context.Context, st Starter, spec Spec) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	sb, err := st.Start(spec)
	if err != nil {
		return nil, err
	}
	defer sb.Destroy()
	return sb.Finish(ctx, bytes.NewReader(spec.Stdin))
}
