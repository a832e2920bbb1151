package sandbox

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// A render's checkout reaches its sandbox as one tar archive on the
// renderer's stdin, after the request line, when it is small enough
// (archiveMaxBytes, archiveMaxFiles): the renderer unpacks it into the
// sandbox's own tmpfs at CheckoutDir and renders from there. Reading a
// file the first time through a bind mount costs a look-up on the host per
// file and several switches into gVisor's Sentry; files in the Sentry's
// tmpfs cost neither. The copy is the sandbox's alone, in its memory (the
// tmpfs counts against Limits.Memory), and goes with it after the one
// render; it is made read-only (no write permission on any file or
// directory) before the render. A larger checkout is mounted read-only at
// linkedDir as before (hard-linked into a pooled sandbox's slot).

// archiveMaxBytes bounds the checkout sent as an archive: its files' pages
// (each file rounded up to whole pages, as a tmpfs holds it). It is also
// the size of the tmpfs at CheckoutDir.
const archiveMaxBytes = 64 << 20

// archiveMaxFiles bounds the entries (files, directories, symlinks) of
// the checkout sent as an archive (a variable for the tests).
var archiveMaxFiles = 10_000

const page = 4096

// archiveEntry is one file of a checkout to send.
type archiveEntry struct {
	rel  string // slash-separated, relative to the checkout
	mode fs.FileMode
	size int64
	link string // a symlink's target
}

// planArchive lists the checkout at root for an archive; ok is false when
// it is larger than archiveMaxBytes or archiveMaxFiles allow (the listing
// stops there). Files other than directories, regular files and symlinks
// are left out, as linkTree leaves them out.
func planArchive(root string) (entries []archiveEntry, ok bool, err error) {
	var pages int64
	errTooLarge := errors.New("too large")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if len(entries) >= archiveMaxFiles {
			return errTooLarge
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		e := archiveEntry{rel: filepath.ToSlash(rel)}
		switch t := d.Type(); {
		case t.IsDir():
			e.mode = fs.ModeDir
		case t&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
			e.mode = fs.ModeSymlink
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			e.mode, e.size = info.Mode().Perm(), info.Size()
			if pages += (e.size + page - 1) / page; pages*page > archiveMaxBytes {
				return errTooLarge
			}
		default:
			return nil
		}
		entries = append(entries, e)
		return nil
	})
	if errors.Is(err, errTooLarge) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("list the checkout: %w", err)
	}
	return entries, true, nil
}

// checkoutInput is a renderer's stdin: the request line, then the
// checkout's archive when it has entries to send.
type checkoutInput struct {
	request []byte // one line of JSON, its newline included
	root    string
	entries []archiveEntry
	archive bool
}

func (in *checkoutInput) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(in.request)
	if err != nil || !in.archive {
		return int64(n), err
	}
	cw := &countWriter{w: w, n: int64(n)}
	return cw.n, writeArchive(cw, in.root, in.entries)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeArchive writes entries of the checkout at root as a tar archive.
func writeArchive(w io.Writer, root string, entries []archiveEntry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		h := &tar.Header{Name: e.rel, Mode: int64(e.mode.Perm())}
		switch {
		case e.mode.IsDir():
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case e.mode&fs.ModeSymlink != 0:
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
		default:
			h.Typeflag, h.Size = tar.TypeReg, e.size
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag == tar.TypeReg {
			if err := copyInto(tw, filepath.Join(root, filepath.FromSlash(e.rel)), e.size); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

func copyInto(w io.Writer, file string, size int64) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, io.LimitReader(f, size))
	if err == nil && n != size {
		err = fmt.Errorf("%s changed while it was sent", file)
	}
	return err
}

// unpackArchive unpacks the archive that follows the request on the
// renderer's stdin into the empty directory dir (CheckoutDir), within the
// bounds the worker checked (the tmpfs's size bounds it too), then takes
// away every write permission. Every name must be a relative path below
// dir whose parent is a directory of the archive, met before it; nothing
// is created through a symlink.
func unpackArchive(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	dirs := map[string]bool{".": true}
	var order []string
	var pages int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read the checkout's archive: %w", err)
		}
		if n >= archiveMaxFiles {
			return fmt.Errorf("the checkout's archive has more than %d entries", archiveMaxFiles)
		}
		name := h.Name
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") || !dirs[path.Dir(name)] {
			return fmt.Errorf("the checkout's archive names %q, not a new path in its directories", name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(target, 0o700); err != nil {
				return err
			}
			dirs[name] = true
			order = append(order, target)
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
		case tar.TypeReg:
			if pages += (h.Size + page - 1) / page; pages*page > archiveMaxBytes {
				return fmt.Errorf("the checkout's archive holds more than %d bytes", archiveMaxBytes)
			}
			// Created without write permission: the file is written
			// through this descriptor only.
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, fs.FileMode(h.Mode).Perm()&^0o222)
			if err != nil {
				return err
			}
			_, err = io.CopyN(f, tr, h.Size)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("unpack %s: %w", name, err)
			}
		default:
			return fmt.Errorf("the checkout's archive has %q of type %c, not a directory, file or symlink", name, h.Typeflag)
		}
	}
	order = append(order, dir)
	for i := len(order) - 1; i >= 0; i-- {
		if err := os.Chmod(order[i], 0o555); err != nil {
			return err
		}
	}
	return nil
}
