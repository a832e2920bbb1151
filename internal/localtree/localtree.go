// Package localtree packs a directory of uncommitted manifests (ferry app
// sync --local DIR) into a tar archive named by the SHA-256 of its bytes,
// and unpacks it on the worker that renders it. The archive holds the
// tree's directories, regular files and symlinks that stay inside it, with
// nothing of the machine it was packed on (no owner, no time, modes made
// 0644/0755), so the same files always give the same digest; .git is left
// out. Both ends check the same rules: a tree that breaks one is refused,
// every problem named at once.
//
//	tree, err := localtree.Pack(root, dir) // tree.Archive, tree.Digest, tree.Path
//	err = localtree.Unpack(tree.Archive, into)
package localtree

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferry-gitops/ferry/internal/treearchive"
)

// MaxBytes bounds a tree's files (each rounded up to whole pages, as
// treearchive counts them): it travels through the manifest cache, one
// value of the workers' Redis.
const MaxBytes = 16 << 20

// MaxFiles bounds a tree's entries (directories, files, symlinks); a
// variable for the tests.
var MaxFiles = 5000

// Tree is a packed directory.
type Tree struct {
	// Archive is the tar archive of the tree.
	Archive []byte
	// Digest is "sha256:" and the hex SHA-256 of Archive.
	Digest string
	// Path is the directory of the manifests inside the tree (DIR relative
	// to the root), slash-separated; "." when they are its root.
	Path string
	// Files counts the tree's regular files.
	Files int
}

// entry is one thing of the tree to pack.
type entry struct {
	rel  string // slash-separated, relative to the root
	abs  string
	mode fs.FileMode
	size int64
	link string
}

// Pack packs the tree at root for the manifests in dir, which must be root
// or a directory below it. Every problem is named at once: dir missing or
// outside root, a symlink leading out of root (or absolute), a file that
// is neither a directory, a regular file nor a symlink, a tree larger than
// MaxBytes or MaxFiles.
func Pack(root, dir string) (*Tree, error) {
	root, dir, rel, err := locate(root, dir)
	if err != nil {
		return nil, err
	}
	entries, problems := list(root)
	files, pages := 0, int64(0)
	for _, e := range entries {
		if e.mode.IsRegular() {
			files++
			pages += treearchive.Pages(e.size)
		}
	}
	if len(entries) > MaxFiles || pages*treearchive.Page > MaxBytes {
		problems = append(problems, fmt.Errorf("%s holds %d entries and %d KiB of files: a local sync takes at most %d entries and %d MiB; "+
			"point --local at the app's directory (and --local-repo-root at the least that it needs)", root, len(entries), pages*treearchive.Page>>10, MaxFiles, MaxBytes>>20))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := write(tw, e); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &Tree{Archive: buf.Bytes(), Digest: Digest(buf.Bytes()), Path: rel, Files: files}, nil
}

// Digest is the digest of an archive: "sha256:" and its hex SHA-256.
func Digest(archive []byte) string {
	sum := sha256.Sum256(archive)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// locate makes root and dir absolute and checks them: both directories,
// dir root or below it. rel is dir relative to root, slash-separated.
func locate(root, dir string) (absRoot, absDir, rel string, err error) {
	if absDir, err = filepath.Abs(dir); err != nil {
		return "", "", "", err
	}
	if root == "" {
		root = dir
	}
	if absRoot, err = filepath.Abs(root); err != nil {
		return "", "", "", err
	}
	for _, d := range []struct{ flag, p string }{{"--local", absDir}, {"--local-repo-root", absRoot}} {
		info, err := os.Stat(d.p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", "", "", fmt.Errorf("%s %s: no such directory", d.flag, d.p)
		case err != nil:
			return "", "", "", fmt.Errorf("%s %s: %w", d.flag, d.p, err)
		case !info.IsDir():
			return "", "", "", fmt.Errorf("%s %s: not a directory; give the directory of the app's manifests", d.flag, d.p)
		}
	}
	r, err := filepath.Rel(absRoot, absDir)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", "", "", fmt.Errorf("--local %s is not inside --local-repo-root %s: give a root that holds it", absDir, absRoot)
	}
	return absRoot, absDir, filepath.ToSlash(r), nil
}

// list walks the tree at root, parents before what they hold, in lexical
// order, leaving .git out; problems are the entries it refuses.
func list(root string) (entries []entry, problems []error) {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			problems = append(problems, err)
			return nil
		}
		if p == root {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil // a worktree's .git file
		}
		rel, _ := filepath.Rel(root, p)
		e := entry{rel: filepath.ToSlash(rel), abs: p, mode: d.Type()}
		switch {
		case d.IsDir():
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				problems = append(problems, err)
				return nil
			}
			if err := CheckLink(e.rel, link); err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", p, err))
				return nil
			}
			e.link = link
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				problems = append(problems, err)
				return nil
			}
			e.mode, e.size = info.Mode(), info.Size()
		default:
			problems = append(problems, fmt.Errorf("%s: a %s, not a directory, file or symlink: remove it from the tree", p, d.Type()))
			return nil
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		problems = append(problems, err)
	}
	return entries, problems
}

// CheckLink refuses a symlink at rel (slash-separated, in the tree) whose
// target is absolute or leads out of the tree.
func CheckLink(rel, link string) error {
	if path.IsAbs(link) || filepath.IsAbs(link) {
		return fmt.Errorf("symlink to %s, an absolute path: a local sync sends the tree alone; make it relative, inside the tree", link)
	}
	if t := path.Join(path.Dir(rel), filepath.ToSlash(link)); t == ".." || strings.HasPrefix(t, "../") {
		return fmt.Errorf("symlink to %s, outside the tree: copy what it points to into the tree, or give a --local-repo-root that holds it", link)
	}
	return nil
}

// epoch is every entry's time: the digest names the files, not when they
// were written.
var epoch = time.Unix(0, 0)

// write adds e to the archive, reading a regular file's bytes.
func write(tw *tar.Writer, e entry) error {
	mode := e.mode
	if mode.IsRegular() {
		mode = 0o644
		if e.mode.Perm()&0o111 != 0 {
			mode = 0o755
		}
	}
	h := treearchive.Header(e.rel, mode, e.size, e.link)
	h.ModTime, h.Format = epoch, tar.FormatPAX
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("pack %s: %w", e.abs, err)
	}
	if !mode.IsRegular() {
		return nil
	}
	f, err := os.Open(e.abs)
	if err != nil {
		return err
	}
	defer f.Close()
	if n, err := io.Copy(tw, io.LimitReader(f, e.size)); err != nil || n != e.size {
		return fmt.Errorf("pack %s: it changed while it was read (%d of %d bytes): %v", e.abs, n, e.size, err)
	}
	return nil
}
