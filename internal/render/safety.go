package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// budget counts the files and bytes one render reads against its Limits.
// It is shared by the goroutines of one render.
type budget struct {
	limits  Limits
	appPath string

	mu    sync.Mutex
	files int
	bytes int64
	// archiveBytes is what archived subcharts inflated to; archiveErr the
	// limit that stopped them (see checkArchives).
	archiveBytes int64
	archiveErr   *LimitError
}

func newBudget(l Limits, appPath string) *budget {
	return &budget{limits: l.withDefaults(), appPath: appPath}
}

// take accounts for one file of size bytes, named display in errors.
func (b *budget) take(display string, size int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.files++; b.files > b.limits.MaxFiles {
		return &LimitError{Path: b.appPath, What: "files", Limit: int64(b.limits.MaxFiles)}
	}
	if size > b.limits.MaxFileBytes {
		return &LimitError{Path: display, What: "file size", Limit: b.limits.MaxFileBytes}
	}
	if b.bytes += size; b.bytes > b.limits.MaxTotalBytes {
		return &LimitError{Path: b.appPath, What: "total size", Limit: b.limits.MaxTotalBytes}
	}
	return nil
}

// readFile reads the regular file real (a path already confined to the
// repository) within the budget.
func (b *budget) readFile(real, display string) ([]byte, error) {
	info, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &SourceError{Path: display, Msg: "not a regular file"}
	}
	if err := b.take(display, info.Size()); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > b.limits.MaxFileBytes { // grew since the Stat
		return nil, &LimitError{Path: display, What: "file size", Limit: b.limits.MaxFileBytes}
	}
	return data, nil
}

// errNotInRepo marks a path that exists nowhere in the repository.
var errNotInRepo = errors.New("no such file in the repository at this revision")

// resolveInRepo resolves rel, a path written in a spec relative to the
// directory base, to a real path inside the repository root (both real,
// clean paths). It refuses absolute paths, paths whose ".." climb out of
// the repository, and paths that symlinks lead out of it: the class of
// Argo CD's CVE-2022-24348. what names the field in errors
// ("spec.source.helm.valueFiles[0]"). A path that does not exist gives an
// error wrapping errNotInRepo.
func resolveInRepo(root, base, rel, what string) (real, display string, err error) {
	if rel == "" {
		return "", "", &SourceError{Path: displayPath(root, base), Msg: what + " is empty"}
	}
	if filepath.IsAbs(rel) || filepath.VolumeName(rel) != "" || rel[0] == '/' || rel[0] == '\\' {
		return "", "", &SourceError{Path: displayPath(root, base), Msg: fmt.Sprintf("%s %q is absolute: write it relative to the app path", what, rel)}
	}
	lexical := filepath.Join(base, filepath.FromSlash(rel))
	if !within(root, lexical) {
		return "", "", &SourceError{Path: displayPath(root, base), Msg: fmt.Sprintf("%s %q leaves the repository", what, rel)}
	}
	display = displayPath(root, lexical)
	real, err = filepath.EvalSymlinks(lexical)
	if errors.Is(err, fs.ErrNotExist) {
		return "", display, &SourceError{Path: display, Msg: fmt.Sprintf("%s: %v", what, errNotInRepo), Err: errNotInRepo}
	}
	if err != nil {
		return "", display, &SourceError{Path: display, Msg: fmt.Sprintf("%s: %v", what, err)}
	}
	if !within(root, real) {
		return "", display, &SourceError{Path: display, Msg: fmt.Sprintf("%s %q is a symlink leading outside the repository", what, rel)}
	}
	return real, display, nil
}

// abandoned counts renders given up on (timeout or cancellation) whose
// goroutine is still running.
var abandoned atomic.Int64

// AbandonedRenders is how many Kustomize or Helm renders were given up on
// and still run in the background: neither library can be interrupted, so
// a render past its time limit finishes on its own and its result is
// dropped. For metrics; a number that keeps growing means templates that
// never end.
func AbandonedRenders() int64 { return abandoned.Load() }

// runBounded runs fn in its own goroutine and waits for it, for ctx, or for
// l.Timeout, whichever ends first. fn gets a context that ends with either,
// for the parts that can stop early. Giving up on the timeout is a
// *LimitError (the source is too slow to render, retrying will not help);
// giving up because ctx ended returns ctx's error.
func runBounded[T any](ctx context.Context, l Limits, appPath string, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	timeout := l.Timeout
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		val T
		err error
	}
	done := make(chan result, 1)
	var mu sync.Mutex
	finished, gaveUp := false, false
	go func() {
		v, err := fn(rctx)
		mu.Lock()
		finished = true
		if gaveUp {
			abandoned.Add(-1)
		}
		mu.Unlock()
		done <- result{v, err}
	}()
	select {
	case res := <-done:
		return res.val, res.err
	case <-rctx.Done():
		mu.Lock()
		if finished { // finished at the same moment
			mu.Unlock()
			res := <-done
			return res.val, res.err
		}
		gaveUp = true
		abandoned.Add(1)
		mu.Unlock()
		if ctx.Err() != nil {
			return zero, ctx.Err()
		}
		return zero, &LimitError{Path: appPath, What: "render time", Limit: int64(timeout), Flag: l.Flags.Timeout}
	}
}
