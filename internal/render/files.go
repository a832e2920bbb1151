package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// fileSystem is what a directory source's render (its app path, source
// type, files and Jsonnet imports) reads the checkout through: the host's
// files (osFiles), or a checkout held in memory (Files), which the
// sandboxed renderer reads from its request instead of writing every file
// into its sandbox and reading it back (each a system call into gVisor).
type fileSystem interface {
	Lstat(name string) (fs.FileInfo, error)
	Stat(name string) (fs.FileInfo, error)
	ReadFile(name string) ([]byte, error)
	EvalSymlinks(name string) (string, error)
	WalkDir(root string, fn fs.WalkDirFunc) error
}

// osFiles is the host's files.
type osFiles struct{}

func (osFiles) Lstat(name string) (fs.FileInfo, error)       { return os.Lstat(name) }
func (osFiles) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (osFiles) ReadFile(name string) ([]byte, error)         { return os.ReadFile(name) }
func (osFiles) EvalSymlinks(name string) (string, error)     { return filepath.EvalSymlinks(name) }
func (osFiles) WalkDir(root string, fn fs.WalkDirFunc) error { return filepath.WalkDir(root, fn) }

// files is what r reads a directory source through: r.Files, else the
// host's files.
func (r *Renderer) files() fileSystem {
	if r.Files != nil {
		return r.Files
	}
	return osFiles{}
}

// Files is a checkout held in memory at the absolute path Root: its
// directories, regular files and symlinks, added with Add. A Renderer
// whose Files is set reads every path under Root from it, and every other
// path (a symlink's absolute target) from the host, as the host's files
// would be read if the checkout were written at Root; it renders only
// directory sources (Jsonnet included), and refuses the others, which
// read their files through their tools: write the checkout out for them
// (WriteTo).
type Files struct {
	root    string
	entries map[string]*memEntry // by absolute, clean path; root included
}

type memEntry struct {
	name     string
	mode     fs.FileMode // type bits and permissions
	data     []byte
	link     string
	children []string // a directory's, sorted
}

// NewFiles is an empty checkout at root (absolute and clean, with no
// symlink among its parents: the host's path to the checkout is not read
// from memory).
func NewFiles(root string) *Files {
	root = filepath.Clean(root)
	return &Files{root: root, entries: map[string]*memEntry{root: {name: filepath.Base(root), mode: fs.ModeDir | 0o555}}}
}

// Root is where the checkout is.
func (f *Files) Root() string { return f.root }

// Add adds the entry rel (slash-separated, relative to Root, clean) of
// mode: a directory (fs.ModeDir), a symlink (fs.ModeSymlink) to link, or a
// regular file holding data. Its parent must have been added before it,
// as a directory, and rel must be new.
func (f *Files) Add(rel string, mode fs.FileMode, data []byte, link string) error {
	p := filepath.Join(f.root, filepath.FromSlash(rel))
	parent, ok := f.entries[filepath.Dir(p)]
	if !ok || !parent.mode.IsDir() || p == f.root || !strings.HasPrefix(p, f.root+string(filepath.Separator)) {
		return fmt.Errorf("%q is not a new path in the checkout's directories", rel)
	}
	if _, dup := f.entries[p]; dup {
		return fmt.Errorf("%q is in the checkout twice", rel)
	}
	e := &memEntry{name: filepath.Base(p), mode: mode, data: data, link: link}
	f.entries[p] = e
	i, _ := slices.BinarySearch(parent.children, e.name)
	parent.children = slices.Insert(parent.children, i, e.name)
	return nil
}

// WriteTo writes the checkout out at Root on the host: the files without
// write permission, the directories made read-only once filled. Root must
// be an empty directory.
func (f *Files) WriteTo() error {
	var dirs []string
	err := f.walk(f.root, f.entries[f.root], func(p string, e *memEntry) error {
		switch {
		case p == f.root:
		case e.mode.IsDir():
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
		case e.mode&fs.ModeSymlink != 0:
			return os.Symlink(e.link, p)
		default:
			out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, e.mode.Perm()&^0o222)
			if err != nil {
				return err
			}
			_, err = out.Write(e.data)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			return err
		}
		dirs = append(dirs, p)
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], 0o555); err != nil {
			return err
		}
	}
	return nil
}

// walk calls fn for p and everything below it, parents first.
func (f *Files) walk(p string, e *memEntry, fn func(string, *memEntry) error) error {
	if err := fn(p, e); err != nil {
		return err
	}
	for _, name := range e.children {
		child := filepath.Join(p, name)
		if err := f.walk(child, f.entries[child], fn); err != nil {
			return err
		}
	}
	return nil
}

// inside tells whether the absolute, clean path p is Root or under it:
// read from memory.
func (f *Files) inside(p string) bool {
	return p == f.root || strings.HasPrefix(p, f.root+string(filepath.Separator))
}

func (f *Files) Lstat(name string) (fs.FileInfo, error) {
	p := filepath.Clean(name)
	if !f.inside(p) {
		return os.Lstat(name)
	}
	if e, ok := f.entries[p]; ok {
		// Its parents are directories of the checkout, none a symlink.
		return memInfo{e}, nil
	}
	if p == f.root {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: syscall.ENOENT}
	}
	// The host follows the symlinks among the parents.
	dir, err := f.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: errnoOf(err)}
	}
	if dir != filepath.Dir(p) {
		info, err := f.Lstat(filepath.Join(dir, filepath.Base(p)))
		if err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: name, Err: errnoOf(err)}
		}
		return info, nil
	}
	return nil, &fs.PathError{Op: "lstat", Path: name, Err: syscall.ENOENT}
}

// errnoOf is the cause of a path's error, without the path.
func errnoOf(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (f *Files) Stat(name string) (fs.FileInfo, error) {
	real, err := f.EvalSymlinks(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: errnoOf(err)}
	}
	return f.Lstat(real)
}

func (f *Files) ReadFile(name string) ([]byte, error) {
	real, err := f.EvalSymlinks(name)
	if err == nil && !f.inside(real) {
		return os.ReadFile(real)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errnoOf(err)}
	}
	e := f.entries[real]
	if e.mode.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	return e.data, nil
}

func (f *Files) readlink(name string) (string, error) {
	p := filepath.Clean(name)
	if !f.inside(p) {
		return os.Readlink(name)
	}
	if e, ok := f.entries[p]; ok && e.mode&fs.ModeSymlink != 0 {
		return e.link, nil
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.EINVAL}
}

// EvalSymlinks is filepath.EvalSymlinks of name on Unix, its path's
// components under Root read from memory (the algorithm of Go's
// path/filepath, walkSymlinks, over Lstat and readlink).
func (f *Files) EvalSymlinks(name string) (string, error) {
	path := name
	volLen := 0
	if len(path) > 0 && path[0] == '/' {
		volLen = 1
	}
	vol := path[:volLen]
	dest := vol
	linksWalked := 0
	for start, end := volLen, volLen; start < len(path); start = end {
		for start < len(path) && path[start] == '/' {
			start++
		}
		end = start
		for end < len(path) && path[end] != '/' {
			end++
		}
		switch {
		case end == start:
			return filepath.Clean(dest), nil
		case path[start:end] == ".":
			continue
		case path[start:end] == "..":
			var r int
			for r = len(dest) - 1; r >= volLen; r-- {
				if dest[r] == '/' {
					break
				}
			}
			if r < volLen || dest[r+1:] == ".." {
				if len(dest) > volLen {
					dest += "/"
				}
				dest += ".."
			} else {
				dest = dest[:r]
			}
			continue
		}
		if len(dest) > 0 && dest[len(dest)-1] != '/' {
			dest += "/"
		}
		dest += path[start:end]
		fi, err := f.Lstat(dest)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.Mode().IsDir() && end < len(path) {
				return "", syscall.ENOTDIR
			}
			continue
		}
		linksWalked++
		if linksWalked > 255 {
			return "", errors.New("EvalSymlinks: too many links")
		}
		link, err := f.readlink(dest)
		if err != nil {
			return "", err
		}
		path = link + path[end:]
		if len(link) > 0 && link[0] == '/' {
			dest, end, vol, volLen = link[:1], 1, link[:1], 1
		} else {
			var r int
			for r = len(dest) - 1; r >= volLen; r-- {
				if dest[r] == '/' {
					break
				}
			}
			if r < volLen {
				dest = vol
			} else {
				dest = dest[:r]
			}
			end = 0
		}
	}
	return filepath.Clean(dest), nil
}

// WalkDir is filepath.WalkDir over the checkout in memory; root must be
// under Root.
func (f *Files) WalkDir(root string, fn fs.WalkDirFunc) error {
	info, err := f.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = f.walkDir(root, fs.FileInfoToDirEntry(info), fn)
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

func (f *Files) walkDir(path string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == filepath.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	e, ok := f.entries[filepath.Clean(path)]
	if !ok {
		// A directory outside Root: not walked from memory.
		return fn(path, d, fmt.Errorf("walk %s: not in the checkout", path))
	}
	for _, name := range e.children {
		child := f.entries[filepath.Join(filepath.Clean(path), name)]
		if err := f.walkDir(filepath.Join(path, name), fs.FileInfoToDirEntry(memInfo{child}), fn); err != nil {
			if err == filepath.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// memInfo is the fs.FileInfo of an entry in memory.
type memInfo struct{ e *memEntry }

func (i memInfo) Name() string { return i.e.name }
func (i memInfo) Size() int64 {
	if i.e.mode&fs.ModeSymlink != 0 {
		return int64(len(i.e.link))
	}
	return int64(len(i.e.data))
}
func (i memInfo) Mode() fs.FileMode  { return i.e.mode }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.e.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }
