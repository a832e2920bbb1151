package sandbox

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/treearchive"
)

// A render's checkout reaches its sandbox as one tar archive on the
// renderer's stdin, after the request line, when it is small enough
// (treearchive.MaxBytes, MaxFiles): the renderer unpacks it into the
// sandbox's own tmpfs at CheckoutDir and renders from there. Reading a
// file the first time through a bind mount costs a look-up on the host per
// file and several switches into gVisor's Sentry; files in the Sentry's
// tmpfs cost neither. The copy is the sandbox's alone, in its memory (the
// tmpfs counts against Limits.Memory), and goes with it after the one
// render; it is made read-only (no write permission on any file or
// directory) before the render. The archive is the one the Git cache kept
// beside the checkout when it wrote it out (treearchive.Path), else one
// made from the checkout's files. A larger checkout is mounted read-only
// at linkedDir as before (hard-linked into a pooled sandbox's slot).

// archiveEntry is one file of a checkout to send.
type archiveEntry struct {
	rel  string // slash-separated, relative to the checkout
	mode fs.FileMode
	size int64
	link string // a symlink's target
}

// checkoutPlan is how a checkout reaches its sandbox.
type checkoutPlan struct {
	send bool // as an archive; else mounted
	// saved is the size of the archive kept beside the checkout, 0 for
	// none: then entries are the checkout's, listed for an archive.
	saved   int64
	entries []archiveEntry
}

// maxSaved bounds an archive kept beside a checkout that is sent as it
// is: what treearchive.MaxFiles entries within MaxBytes take at most,
// headers, padding and the archive's end included.
func maxSaved() int64 {
	return treearchive.MaxBytes + int64(treearchive.MaxFiles)*3*tarBlock + 2*tarBlock
}

// planCheckout plans the checkout at root: its kept archive when it has
// one, else its files when they can be sent (planArchive).
func planCheckout(root string) (checkoutPlan, error) {
	info, err := os.Lstat(treearchive.Path(root))
	if err == nil && info.Mode().IsRegular() && info.Size() > 0 && info.Size() <= maxSaved() {
		return checkoutPlan{send: true, saved: info.Size()}, nil
	}
	entries, ok, err := planArchive(root)
	return checkoutPlan{send: ok, entries: entries}, err
}

// planArchive lists the checkout at root for an archive; ok is false when
// it is larger than treearchive.MaxBytes or MaxFiles allow. Files other
// than directories, regular files and symlinks are left out, as linkTree
// leaves them out. The walk reads only the directories; the regular files
// are looked up after it, on every core (statFiles).
func planArchive(root string) (entries []archiveEntry, ok bool, err error) {
	errTooLarge := errors.New("too large")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if len(entries) >= treearchive.MaxFiles {
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
		default:
			return nil
		}
		entries = append(entries, e)
		return nil
	})
	if errors.Is(err, errTooLarge) {
		return nil, false, nil
	}
	if err == nil {
		err = statFiles(root, entries)
	}
	if err != nil {
		return nil, false, fmt.Errorf("list the checkout: %w", err)
	}
	var pages int64
	for _, e := range entries {
		if pages += treearchive.Pages(e.size); pages*treearchive.Page > treearchive.MaxBytes {
			return nil, false, nil
		}
	}
	return entries, true, nil
}

// statFiles sets the mode and size of the regular files among entries
// (those of mode 0), looked up on every core; a file that is no longer a
// regular file is an error.
func statFiles(root string, entries []archiveEntry) error {
	var files []int
	for i, e := range entries {
		if e.mode == 0 {
			files = append(files, i)
		}
	}
	errs := make([]error, len(files))
	onEveryCore(len(files), func(i int) {
		e := &entries[files[i]]
		file := filepath.Join(root, filepath.FromSlash(e.rel))
		info, err := os.Lstat(file)
		switch {
		case err != nil:
			errs[i] = err
		case !info.Mode().IsRegular():
			errs[i] = fmt.Errorf("%s changed while it was listed", file)
		default:
			e.mode, e.size = info.Mode().Perm(), info.Size()
		}
	})
	return firstError(errs)
}

// checkoutInput is a renderer's stdin: the request line, then the
// checkout's archive when it has entries to send, made whole before the
// sandbox is taken (newCheckoutInput) so that it reaches the renderer in
// a few large writes: written as tar writes it, a header and a file at a
// time, each small write woke the renderer for a small read, a switch into
// gVisor's Sentry and back, and on a loaded machine a wait for a core.
type checkoutInput struct {
	data    []byte // the request line, its newline included, then the archive
	root    string
	archive bool
}

// newCheckoutInput is the stdin of request (one line of JSON, its newline
// included), with the archive of the checkout at root as plan sends it.
func newCheckoutInput(request []byte, root string, plan checkoutPlan) (*checkoutInput, error) {
	in := &checkoutInput{root: root, archive: plan.send}
	switch {
	case !plan.send:
		in.data = request
	case plan.saved > 0:
		in.data = make([]byte, len(request)+int(plan.saved))
		copy(in.data, request)
		if err := readSized(treearchive.Path(root), in.data[len(request):]); err != nil {
			return nil, fmt.Errorf("the checkout's archive: %w", err)
		}
	default:
		var size int64
		for _, e := range plan.entries {
			size += 2*tarBlock + e.size
		}
		buf := bytes.NewBuffer(make([]byte, 0, int64(len(request))+size+2*tarBlock))
		buf.Write(request)
		if err := writeArchive(buf, root, plan.entries); err != nil {
			return nil, fmt.Errorf("the checkout's archive: %w", err)
		}
		in.data = buf.Bytes()
	}
	return in, nil
}

// tarBlock is a tar archive's unit: a header, and the padding of a file.
const tarBlock = 512

func (in *checkoutInput) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(in.data)
	return int64(n), err
}

// writeArchive writes entries of the checkout at root as a tar archive to
// buf: first the headers, with zeros in each file's place, then the
// files, each read into its place, on every core.
func writeArchive(buf *bytes.Buffer, root string, entries []archiveEntry) error {
	type place struct {
		file      string
		off, size int
	}
	var places []place
	tw := tar.NewWriter(buf)
	for _, e := range entries {
		h := treearchive.Header(e.rel, e.mode, e.size, e.link)
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		// The tar.Writer writes through: the file starts here.
		places = append(places, place{file: filepath.Join(root, filepath.FromSlash(e.rel)), off: buf.Len(), size: int(e.size)})
		for left := e.size; left > 0; {
			n, err := tw.Write(zeros[:min(left, int64(len(zeros)))])
			if err != nil {
				return err
			}
			left -= int64(n)
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	data := buf.Bytes()
	errs := make([]error, len(places))
	onEveryCore(len(places), func(i int) {
		p := places[i]
		errs[i] = readSized(p.file, data[p.off:p.off+p.size])
	})
	return firstError(errs)
}

// zeros fills a file's place in the archive until the file is read into it.
var zeros = make([]byte, 64<<10)

// readSized fills buf with the first len(buf) bytes of the regular file at
// file. It opens the file with plain system calls: an os.File's set-up
// (fstat, non-blocking mode, the poller) was a third of the archive's time
// for a checkout of small files. A symlink in place of the file listed is
// an error, as is a file shorter than listed.
func readSized(file string, buf []byte) error {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(file, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return &fs.PathError{Op: "open", Path: file, Err: err}
	}
	defer syscall.Close(fd)
	for n := 0; n < len(buf); {
		m, err := syscall.Read(fd, buf[n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return &fs.PathError{Op: "read", Path: file, Err: err}
		case m == 0:
			return fmt.Errorf("%s changed while it was sent", file)
		}
		n += m
	}
	return nil
}

// unpackArchive unpacks the archive that follows the request on the
// renderer's stdin into the empty directory dir (CheckoutDir): readArchive,
// then the checkout written out without write permission anywhere.
func unpackArchive(r io.Reader, dir string) error {
	files, err := readArchive(r, dir)
	if err != nil {
		return err
	}
	return files.WriteTo()
}

// readArchive reads the archive that follows the request on the
// renderer's stdin into memory, as the checkout at dir, within the bounds
// the worker checked. Every name must be a relative path below dir whose
// parent is a directory of the archive, met before it.
func readArchive(r io.Reader, dir string) (*render.Files, error) {
	tr := tar.NewReader(r)
	files := render.NewFiles(dir)
	var pages int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the checkout's archive: %w", err)
		}
		if n >= treearchive.MaxFiles {
			return nil, fmt.Errorf("the checkout's archive has more than %d entries", treearchive.MaxFiles)
		}
		name := h.Name
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("the checkout's archive names %q, not a new path in its directories", name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = files.Add(name, fs.ModeDir|0o555, nil, "")
		case tar.TypeSymlink:
			err = files.Add(name, fs.ModeSymlink|0o777, nil, h.Linkname)
		case tar.TypeReg:
			if pages += treearchive.Pages(h.Size); pages*treearchive.Page > treearchive.MaxBytes {
				return nil, fmt.Errorf("the checkout's archive holds more than %d bytes", treearchive.MaxBytes)
			}
			data := make([]byte, h.Size)
			if _, err := io.ReadFull(tr, data); err != nil {
				return nil, fmt.Errorf("unpack %s: %w", name, err)
			}
			err = files.Add(name, fs.FileMode(h.Mode).Perm()&^0o222, data, "")
		default:
			return nil, fmt.Errorf("the checkout's archive has %q of type %c, not a directory, file or symlink", name, h.Typeflag)
		}
		if err != nil {
			return nil, fmt.Errorf("the checkout's archive: %w", err)
		}
	}
}
