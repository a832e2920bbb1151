package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// State is one worker's own directory under the sandbox state directory
// (runsc's state, bundles, pooled sandboxes' checkouts), locked as long as
// the worker runs, so that other workers sharing the state directory leave
// it alone and sweep it once the worker is gone.
type State struct {
	// Dir is the worker's directory: give it to New and Renderer.PoolDir.
	Dir string
	// SweptContainers and SweptDirs count what workers that are gone had
	// left: gVisor containers deleted, directories removed.
	SweptContainers, SweptDirs int
	lock                       *os.File
}

// stateLock is the file in a worker's directory that it holds locked.
const stateLock = "lock"

// ClaimState sweeps what workers that are gone left under stateDir (their
// gVisor containers deleted, their directories removed, also those of the
// layout before per-worker directories) and makes a locked directory of
// this worker's own there. runsc is the runsc that deletes the containers
// ("" is the one on PATH): the one the worker runs its sandboxes with.
func ClaimState(stateDir, runsc string) (*State, error) {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox state: %w", err)
	}
	// One worker sweeps and claims at a time: none takes another's
	// directory for a dead one's while it is being made.
	guard, err := lockFile(filepath.Join(stateDir, ".claim"), true)
	if err != nil {
		return nil, fmt.Errorf("sandbox state: %w", err)
	}
	defer guard.Close()
	containers, dirs := sweep(stateDir, runsc)
	dir, err := os.MkdirTemp(stateDir, "w")
	if err != nil {
		return nil, fmt.Errorf("sandbox state: %w", err)
	}
	lock, err := lockFile(filepath.Join(dir, stateLock), false)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox state: %w", err)
	}
	return &State{Dir: dir, SweptContainers: containers, SweptDirs: dirs, lock: lock}, nil
}

// Close removes the worker's directory and releases it; the sandboxes in
// it must be destroyed already (Renderer.Close).
func (s *State) Close() error {
	unmountNullNetNS(filepath.Join(s.Dir, "runsc"))
	err := os.RemoveAll(s.Dir)
	if s.lock != nil {
		_ = s.lock.Close()
	}
	return err
}

// lockFile opens path and takes its exclusive flock, waiting for it when
// wait, else failing when another holds it.
func lockFile(path string, wait bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweep removes what workers that are gone left in stateDir: each
// directory whose lock no one holds, after deleting the gVisor containers
// of its runsc state; and the runsc and bundles directories of the layout
// before per-worker directories.
func sweep(stateDir, runsc string) (containers, dirs int) {
	entries, err := os.ReadDir(stateDir)
	if err != nil {
		return 0, 0
	}
	for _, e := range entries {
		dir := filepath.Join(stateDir, e.Name())
		switch {
		case !e.IsDir():
			continue
		case e.Name() == "runsc":
			containers += deleteContainers(runsc, dir)
			unmountNullNetNS(dir)
		case e.Name() == "bundles":
		default:
			lock, err := lockFile(filepath.Join(dir, stateLock), false)
			if err != nil {
				continue // held: its worker runs
			}
			containers += deleteContainers(runsc, filepath.Join(dir, "runsc"))
			unmountNullNetNS(filepath.Join(dir, "runsc"))
			lock.Close()
		}
		if os.RemoveAll(dir) == nil {
			dirs++
		}
	}
	return containers, dirs
}

// deleteContainers force-deletes every container of the runsc state root
// (a crashed worker's sandboxes died with it, Pdeathsig, but their state
// stays); it counts those deleted.
func deleteContainers(runsc, root string) int {
	if _, err := os.Stat(root); err != nil {
		return 0
	}
	if runsc == "" {
		runsc = "runsc"
	}
	runsc, err := exec.LookPath(runsc)
	if err != nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	runscCmd := func(args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, runsc, append([]string{"--root", root}, args...)...)
		cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
		return cmd
	}
	out, err := runscCmd("list", "-quiet").Output()
	if err != nil {
		return 0
	}
	n := 0
	for _, id := range strings.Fields(string(out)) {
		if runscCmd("delete", "--force", id).Run() == nil {
			n++
		}
	}
	return n
}
