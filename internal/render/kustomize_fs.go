package render

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// errOutsideRepo is what repoFS answers for a path outside the repository.
var errOutsideRepo = errors.New("outside the repository")

// repoFS is the file system kustomize sees: the disk, read-only, confined
// to the repository. Every path is resolved, symlinks included, and
// refused unless it lies inside the repository (or inside the checkout of
// one of the remote bases the worker fetched, see addRemote). Kustomize's
// LoadRestrictionsRootOnly keeps files under their kustomization's
// directory but lets bases climb anywhere ("../../.."); repoFS is what
// keeps them in the repository. Reads count against the render's budget,
// and overrides stand in for files that Ferry edits (the kustomization,
// when spec.source.kustomize sets options, and kustomizations naming
// remote bases) so the checkout is never written.
type repoFS struct {
	disk   filesys.FileSystem
	root   string // real repository root
	budget *budget

	mu        sync.Mutex
	remotes   map[string]string // checkouts of remote bases: real dir -> label
	overrides map[string][]byte // by real path
	escape    string            // the first path refused, for the error
	// readErr is the first read that reached a limit or held a SOPS file
	// that does not open: kustomize reports either as a file it could
	// not find.
	readErr error
	// decrypt gives a file's contents in clear when SOPS encrypted it
	// (decryptFile); nil reads files as they are.
	decrypt func(display string, data []byte) ([]byte, error)
}

var _ filesys.FileSystem = (*repoFS)(nil)

func newRepoFS(root string, b *budget) *repoFS {
	return &repoFS{disk: filesys.MakeFsOnDisk(), root: root, budget: b, overrides: map[string][]byte{}, remotes: map[string]string{}}
}

// addRemote lets kustomize read the checkout of a remote base at the real
// directory dir; label names it in errors ("https://host/repo@1a2b3c").
func (f *repoFS) addRemote(dir, label string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remotes[dir] = label
}

// remote returns the checkout of a remote base holding real, and its label.
func (f *repoFS) remote(real string) (dir, label string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for d, l := range f.remotes {
		if within(d, real) {
			return d, l, true
		}
	}
	return "", "", false
}

// display names the real path p in errors: relative to the repository,
// or to the remote base it is in.
func (f *repoFS) display(p string) string {
	if dir, label, ok := f.remote(p); ok && !within(f.root, p) {
		rel, _ := filepath.Rel(dir, p)
		return label + "/" + filepath.ToSlash(rel)
	}
	return displayPath(f.root, p)
}

// relabel names the checkouts of remote bases in a kustomize error by
// their labels, not by the worker's paths.
func (f *repoFS) relabel(err error) error {
	var tool *ToolError
	if !errors.As(err, &tool) {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for dir, label := range f.remotes {
		tool.Msg = strings.ReplaceAll(tool.Msg, dir, label)
	}
	return err
}

// override makes reads of the real path p return data.
func (f *repoFS) override(p string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overrides[p] = data
}

// escaped returns the first path refused, relative to the repository when
// it can be written so.
func (f *repoFS) escaped() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.escape
}

// confine resolves p and returns its real path, or errOutsideRepo. A path
// that does not exist is resolved through its nearest existing parent.
func (f *repoFS) confine(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := evalExisting(abs)
	if err != nil {
		return "", err
	}
	if within(f.root, real) {
		return real, nil
	}
	if _, _, ok := f.remote(real); ok {
		return real, nil
	}
	f.mu.Lock()
	if f.escape == "" {
		f.escape = displayEscape(f.root, abs)
	}
	f.mu.Unlock()
	return "", fmt.Errorf("%s: %w", displayEscape(f.root, abs), errOutsideRepo)
}

// evalExisting is filepath.EvalSymlinks for paths whose tail may not exist
// yet: the existing part is resolved and the rest appended.
func evalExisting(abs string) (string, error) {
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs, nil
	}
	realParent, err := evalExisting(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(realParent, filepath.Base(abs)), nil
}

// displayEscape names a refused path: relative to the repository root
// ("../../etc/passwd") when that is how it was reached, never the worker's
// own directories.
func displayEscape(root, abs string) string {
	rel, err := filepath.Rel(root, abs)
	if err != nil {
		return filepath.Base(abs)
	}
	if strings.HasPrefix(rel, "..") {
		// A path outside the repository named by its climb only.
		return filepath.ToSlash(rel)
	}
	return filepath.ToSlash(rel) + " (a symlink)"
}

func (f *repoFS) readOnly(p string) error {
	return fmt.Errorf("%s: the repository is read-only while rendering", displayEscape(f.root, p))
}

func (f *repoFS) Create(p string) (filesys.File, error) { return nil, f.readOnly(p) }
func (f *repoFS) Mkdir(p string) error                  { return f.readOnly(p) }
func (f *repoFS) MkdirAll(p string) error               { return f.readOnly(p) }
func (f *repoFS) WriteFile(p string, _ []byte) error    { return f.readOnly(p) }

func (f *repoFS) RemoveAll(p string) error { return f.readOnly(p) }

func (f *repoFS) Open(p string) (filesys.File, error) {
	real, err := f.confine(p)
	if err != nil {
		return nil, err
	}
	return f.disk.Open(real)
}

func (f *repoFS) IsDir(p string) bool {
	real, err := f.confine(p)
	return err == nil && f.disk.IsDir(real)
}

func (f *repoFS) Exists(p string) bool {
	real, err := f.confine(p)
	if err != nil {
		return false
	}
	f.mu.Lock()
	_, over := f.overrides[real]
	f.mu.Unlock()
	return over || f.disk.Exists(real)
}

func (f *repoFS) ReadDir(p string) ([]string, error) {
	real, err := f.confine(p)
	if err != nil {
		return nil, err
	}
	return f.disk.ReadDir(real)
}

func (f *repoFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	real, err := f.confine(p)
	if err != nil {
		return "", "", err
	}
	f.mu.Lock()
	_, over := f.overrides[real]
	f.mu.Unlock()
	if over && !f.disk.Exists(real) {
		// A file only Ferry wrote (inflated charts): its directory is real.
		dir, _, err := f.disk.CleanedAbs(filepath.Dir(real))
		if err != nil {
			return "", "", err
		}
		return dir, filepath.Base(real), nil
	}
	dir, file, err := f.disk.CleanedAbs(p)
	if err != nil {
		return "", "", err
	}
	if _, err := f.confine(dir.String()); err != nil {
		return "", "", err
	}
	return dir, file, nil
}

func (f *repoFS) Glob(pattern string) ([]string, error) {
	if _, err := f.confine(filepath.Dir(pattern)); err != nil {
		return nil, err
	}
	matches, err := f.disk.Glob(pattern)
	if err != nil {
		return nil, err
	}
	out := matches[:0]
	for _, m := range matches {
		if _, err := f.confine(m); err == nil {
			out = append(out, m)
		}
	}
	return out, nil
}

func (f *repoFS) ReadFile(p string) ([]byte, error) {
	real, err := f.confine(p)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	data, over := f.overrides[real]
	f.mu.Unlock()
	if over {
		return data, nil
	}
	data, err = f.budget.readFile(real, f.display(real))
	var limit *LimitError
	if errors.As(err, &limit) {
		f.failed(err)
	}
	if err == nil && f.decrypt != nil {
		if data, err = f.decrypt(f.display(real), data); err != nil {
			f.failed(err)
		}
	}
	return data, err
}

// failed records the first read that failed for a reason kustomize would
// hide (readErr).
func (f *repoFS) failed(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.readErr == nil {
		f.readErr = err
	}
}

// limit returns the first read that reached a limit or held a SOPS file
// that does not open: kustomize reports such a read as a file it could
// not find.
func (f *repoFS) limit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readErr
}

// Walk visits the tree under p without following symlinks (as
// filepath.Walk); files are read through ReadFile, which confines them.
func (f *repoFS) Walk(p string, walkFn filepath.WalkFunc) error {
	real, err := f.confine(p)
	if err != nil {
		return err
	}
	return f.disk.Walk(real, walkFn)
}
