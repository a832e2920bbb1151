package sandbox

import (
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// A gVisor sandbox's processes (its sandbox, its gofer and their stubs)
// are runsc run's children, each in a session of its own. runsc run reaps
// them when it ends the sandbox; when it is killed instead (it did not end
// within launch's WaitDelay on a loaded host), they outlive it, and the
// host's init would end up with them, after the worker that started them
// is gone. Orphans makes the worker their reaper
// (PR_SET_CHILD_SUBREAPER): they become its children, it reaps those that
// died as it goes, and it ends every one that is left before it exits.
//
// An orphan is a child of another session: the worker's own commands
// (runsc run, bwrap, git, plugins) stay in its session, so their exit
// statuses stay theirs to wait for.

// Orphans reaps the orphans adopted by this process; Close ends them.
type Orphans struct {
	sid       int
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// AdoptOrphans makes this process the reaper of its descendants' orphans
// and reaps the dead ones every interval.
func AdoptOrphans(interval time.Duration) (*Orphans, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return nil, err
	}
	sid, err := unix.Getsid(0)
	if err != nil {
		return nil, err
	}
	o := &Orphans{sid: sid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(o.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-o.stop:
				return
			case <-t.C:
				o.reap(false)
			}
		}
	}()
	return o, nil
}

// Close stops the reaping and ends every orphan left: SIGKILL, then waits
// for each, until none is left or timeout has passed; the children of a
// killed orphan (a sandbox's stubs) come to this process in turn and go
// the same way. Then it stops adopting: later orphans go to the host's
// init, not to a process that no longer waits for them. Call it once the
// sandboxes are destroyed (Renderer.Close).
func (o *Orphans) Close(timeout time.Duration) {
	o.closeOnce.Do(func() {
		close(o.stop)
		<-o.done
		defer func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) }()
		deadline := time.Now().Add(timeout)
		for o.reap(true) > 0 {
			if time.Now().After(deadline) {
				slog.Warn("render sandbox: processes of ended sandboxes are still alive", "timeout", timeout)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// reap waits for every dead orphan, and kills the live ones when kill is
// set; it returns how many orphans were found.
func (o *Orphans) reap(kill bool) int {
	procs, err := procfs.AllProcs()
	if err != nil {
		return 0
	}
	self := os.Getpid()
	found := 0
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil || st.PPID != self || st.Session == o.sid {
			continue
		}
		found++
		if kill && st.State != "Z" {
			_ = unix.Kill(p.PID, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		_, _ = unix.Wait4(p.PID, &ws, unix.WNOHANG, nil)
	}
	return found
}
