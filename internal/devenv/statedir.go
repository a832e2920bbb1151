package devenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// stateMarker marks a directory as a devenv state dir: Start only wipes a
// non-empty directory that carries it.
const stateMarker = ".ferry-dev"

// keptOnReuse survive a new Start on the same state dir: the Git repos, the
// published charts and the registry's blobs.
var keptOnReuse = map[string]bool{"git": true, "helm": true, "registry": true, stateMarker: true, ".lock": true}

// prepareStateDir makes dir ready for a fresh stack: it takes the dir's lock
// (one stack per dir) and removes what an earlier stack left, except the
// Git repos. The returned file holds the lock until closed.
func prepareStateDir(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read state dir: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, stateMarker)); len(entries) > 0 && errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("state dir %s is not empty and was not made by ferry dev up: choose another --state-dir (it would be wiped)", dir)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the state dir lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := os.ReadFile(lock.Name())
		lock.Close()
		return nil, fmt.Errorf("state dir %s is in use by another stack (pid %s): stop it or choose another --state-dir", dir, pid)
	}
	_ = lock.Truncate(0)
	_, _ = fmt.Fprintf(lock, "%d", os.Getpid())
	if err := os.WriteFile(filepath.Join(dir, stateMarker), []byte("state of a ferry dev stack: wiped on the next start, except git/, helm/ and registry/\n"), 0o644); err != nil {
		lock.Close()
		return nil, err
	}
	for _, e := range entries {
		if keptOnReuse[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			lock.Close()
			return nil, fmt.Errorf("clean state dir: %w", err)
		}
	}
	for _, sub := range []string{"logs", "git", "regions"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			lock.Close()
			return nil, fmt.Errorf("create state dir: %w", err)
		}
	}
	return lock, nil
}

// tempDirPrefix names the state dirs Start makes when Options.StateDir is empty.
const tempDirPrefix = "ferry-dev-"

// sweepAbandonedTempDirs removes temporary state dirs whose stack died
// without Stop (a test binary killed by its timeout): nobody holds their
// lock. A dir younger than a minute may be one that is being set up.
func sweepAbandonedTempDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempDirPrefix+"*"))
	for _, dir := range dirs {
		st, err := os.Stat(dir)
		if err != nil || !st.IsDir() || time.Since(st.ModTime()) < time.Minute {
			continue
		}
		lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR, 0)
		if err != nil {
			continue // not ours, or not set up: leave it
		}
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = os.RemoveAll(dir)
		}
		lock.Close()
	}
}
