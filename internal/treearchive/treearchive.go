// Package treearchive is the tar archive in which a checkout reaches a
// render sandbox: its directories, regular files and symlinks, each
// directory before what it holds, within MaxBytes and MaxFiles. The
// worker's Git cache writes one beside each commit's tree as it exports
// the tree (Builder, at Path of the tree), from the blobs it writes out
// anyway, so that a render sends it as it is instead of listing and
// reading the tree's files back; a render sandbox makes one from the
// directory of a checkout that has none (internal/sandbox).
package treearchive

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxBytes bounds a checkout sent as an archive: its files' pages (each
// file rounded up to whole pages, as a tmpfs holds it).
const MaxBytes = 64 << 20

// MaxFiles bounds the entries (files, directories, symlinks) of a checkout
// sent as an archive (a variable for the tests).
var MaxFiles = 10_000

// Page is the unit of a file's size counted against MaxBytes.
const Page = 4096

// Pages is how many pages a file of size bytes takes.
func Pages(size int64) int64 { return (size + Page - 1) / Page }

// Header is the header of the entry rel (slash-separated, relative to the
// checkout) of mode: a directory, a symlink to link, or a regular file of
// size bytes with mode's permissions.
func Header(rel string, mode fs.FileMode, size int64, link string) *tar.Header {
	switch {
	case mode.IsDir():
		return &tar.Header{Name: rel, Typeflag: tar.TypeDir, Mode: 0o755}
	case mode&fs.ModeSymlink != 0:
		return &tar.Header{Name: rel, Typeflag: tar.TypeSymlink, Linkname: link, Mode: 0o777}
	default:
		return &tar.Header{Name: rel, Typeflag: tar.TypeReg, Mode: int64(mode.Perm()), Size: size}
	}
}

// Path is where the archive of the tree at dir is kept: beside it, never
// in it, so that no render of the tree sees it.
func Path(dir string) string { return dir + ".tar" }

// Builder writes a tree's archive to a file while the tree is written out,
// entry by entry, parents first. A tree larger than MaxBytes or MaxFiles
// allow gets none: Close removes what was written.
type Builder struct {
	path  string
	file  *os.File
	buf   *bufio.Writer
	tw    *tar.Writer
	files int
	pages int64
	err   error // the first write's error, or errTooLarge
}

var errTooLarge = errors.New("too large for an archive")

// NewBuilder starts the archive at path, a new file.
func NewBuilder(path string) (*Builder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the tree's archive: %w", err)
	}
	buf := bufio.NewWriterSize(f, 256<<10)
	return &Builder{path: path, file: f, buf: buf, tw: tar.NewWriter(buf)}, nil
}

// Add adds the entry rel of mode (as Header takes them) and returns where
// a regular file's size bytes go: into the archive, or nowhere once the
// archive is given up.
func (b *Builder) Add(rel string, mode fs.FileMode, size int64, link string) io.Writer {
	if b.err == nil {
		b.files++
		if b.pages += Pages(size); b.files > MaxFiles || b.pages*Page > MaxBytes {
			b.err = errTooLarge
		}
	}
	if b.err == nil {
		b.err = b.tw.WriteHeader(Header(rel, mode, size, link))
	}
	if b.err != nil || !mode.IsRegular() {
		return io.Discard
	}
	return writer{b}
}

type writer struct{ b *Builder }

func (w writer) Write(p []byte) (int, error) {
	if w.b.err != nil {
		return len(p), nil
	}
	if _, err := w.b.tw.Write(p); err != nil {
		w.b.err = err
	}
	return len(p), nil
}

// Close ends the archive. It is kept when it holds the whole tree (the
// tree within the bounds, and every entry written whole), and removed
// otherwise; the error is an archive that could be neither.
func (b *Builder) Close() error {
	if b.err == nil {
		b.err = b.tw.Close()
	}
	if b.err == nil {
		b.err = b.buf.Flush()
	}
	cerr := b.file.Close()
	if b.err == nil && cerr == nil {
		return nil
	}
	return b.Discard()
}

// Discard removes the archive, as for a tree that was not written whole.
func (b *Builder) Discard() error {
	_ = b.file.Close()
	if err := os.Remove(b.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the tree's archive: %w", err)
	}
	return nil
}
