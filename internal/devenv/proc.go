package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a process gets after SIGTERM before its group is
// killed. kube-apiserver would wait much longer for its graceful shutdown.
const stopGrace = 5 * time.Second

// proc is one process of the stack, in its own process group, logging to
// DIR/logs/<name>.log.
type proc struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{} // closed once the process has exited and been reaped
	err     error         // the exit status, valid after done is closed
}

// startProc starts bin with args; the process writes stdout and stderr to
// logDir/name.log (appended, so a restart keeps the earlier lines).
func startProc(name, logDir, dir string, env []string, bin string, args ...string) (*proc, error) {
	return startProcAttr(name, logDir, dir, env, sysProcAttr(), bin, args...)
}

// startProcAttr is startProc with the process attributes given: attr must
// keep sysProcAttr's process group and parent-death signal.
func startProcAttr(name, logDir, dir string, env []string, attr *syscall.SysProcAttr, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(logDir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the log of %s: %w", name, err)
	}
	defer logFile.Close() // the child holds its own descriptor
	fmt.Fprintf(logFile, "=== %s %s %q\n", time.Now().Format(time.RFC3339), bin, args)

	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = nil
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p := &proc{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (p *proc) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then kills the
// group. It always returns with the process reaped and its group killed, so
// whatever the process started goes too.
func (p *proc) stop(grace time.Duration) error {
	pgid := p.pid() // Setpgid: the group id is the leader's pid
	if ok, _ := p.exited(); !ok {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	// Kill the group even after a clean exit: a child may have outlived it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, pgid)
	}
}

// errStopWaiting marks an error of a readiness check that no retry can
// clear: waitReady returns it at once.
var errStopWaiting = errors.New("stop waiting")

type stopWaitingError struct{ err error }

func (e stopWaitingError) Error() string   { return e.err.Error() }
func (e stopWaitingError) Unwrap() []error { return []error{e.err, errStopWaiting} }
func stopWaiting(err error) error          { return stopWaitingError{err} }

// waitReady polls check every interval until it succeeds, the process exits,
// or timeout passes. The error names the process and its log. A check error
// made by stopWaiting ends the wait at once.
func (p *proc) waitReady(ctx context.Context, what string, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		checkCtx, cancelCheck := context.WithTimeout(ctx, 5*time.Second)
		last = check(checkCtx)
		cancelCheck()
		if last == nil {
			return nil
		}
		if errors.Is(last, errStopWaiting) {
			return fmt.Errorf("%s: %w", what, last)
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready (%v): see %s, which ends:\n%s", what, p.err, p.logPath, lastLines(p.logPath, 5))
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s not ready after %s (last check: %v): see %s", what, timeout, last, p.logPath)
			}
			return fmt.Errorf("%s: waiting for it to be ready: %w", what, ctx.Err())
		case <-tick.C:
		}
	}
}

// lastLines returns the last n lines of a log (at most 4 KiB), indented, to
// put into an error that a user reads without opening the file.
func lastLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const maxBytes = 4096
	if st, err := f.Stat(); err == nil && st.Size() > maxBytes {
		_, _ = f.Seek(-maxBytes, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

// stopAll stops processes concurrently; nil entries are skipped.
func stopAll(ps []*proc, grace time.Duration) error {
	var wg sync.WaitGroup
	errs := make([]error, len(ps))
	for i, p := range ps {
		if p == nil {
			continue
		}
		wg.Go(func() { errs[i] = p.stop(grace) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// answersOK is a readiness check: a GET of url answers 200.
func answersOK(url string) func(context.Context) error {
	client := &http.Client{Timeout: 5 * time.Second}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s answered %s", url, resp.Status)
		}
		return nil
	}
}
