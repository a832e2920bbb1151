package gitsource

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Defaults of Options.MaxFileBytes and Options.MaxCheckoutBytes.
const (
	DefaultMaxFileBytes     = 64 << 20
	DefaultMaxCheckoutBytes = 1 << 30
)

// streamAbove is the size past which go-git reads an object from its pack
// as a stream rather than into memory (its LargeObjectThreshold).
const streamAbove = 1 << 20

// LimitError says that a repository holds more than the worker checks out:
// a file larger than Options.MaxFileBytes (an object of a fetched pack, or
// a file of the commit's tree), or a tree larger than
// Options.MaxCheckoutBytes. It is known from the objects' headers, before
// anything is inflated, and is the same for every attempt at the commit.
type LimitError struct {
	Path  string // the file in the tree; empty for a fetched object
	What  string // "file size" or "checkout size"
	Size  int64  // the object's size; 0 when unknown
	Limit int64
	// Flag is the worker setting that raises the limit (Options.FileFlag,
	// Options.CheckoutFlag); empty names none.
	Flag string
}

func (e *LimitError) Error() string {
	raise := "raise the worker's limit"
	if e.Flag != "" {
		raise = "raise it with " + e.Flag
	}
	switch {
	case e.What == "checkout size":
		return fmt.Sprintf("the commit's files add up to more than %s, the most the worker checks out; split the repository, or %s", sizeString(e.Limit), raise)
	case e.Path == "":
		return fmt.Sprintf("the repository holds a file of %s, larger than the %s the worker checks out for one file; remove it from every branch and tag (or keep it in Git LFS), or %s",
			sizeString(e.Size), sizeString(e.Limit), raise)
	}
	return fmt.Sprintf("file %s is %s, larger than the %s the worker checks out for one file; remove it (or keep it in Git LFS), or %s",
		e.Path, sizeString(e.Size), sizeString(e.Limit), raise)
}

// IsLimit reports whether err is a *LimitError: the repository is too large
// to check out, and retrying cannot help until the commit or the worker's
// limits change.
func IsLimit(err error) bool {
	var limit *LimitError
	return errors.As(err, &limit)
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// limitedStorage is a clone's object storage that refuses, while a pack is
// fetched, any object larger than maxObject, reading only the objects'
// headers: go-git's pack parser would hold each object whole in memory.
type limitedStorage struct {
	*filesystem.Storage
	maxObject int64
	flag      string
	dir       string // the clone's, for temporary packs left by a refusal
}

// PackfileWriter is the storage's, with every byte also read by a
// packChecker before it is written.
func (s *limitedStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return newPackChecker(w, s), nil
}

// packChecker scans a pack as it is written: for each object, its type
// and size from the header, and for a delta the size of the object it
// makes (from the delta's own header), refusing one larger than the limit
// before the rest of the pack reaches the storage.
type packChecker struct {
	w  io.WriteCloser
	s  *limitedStorage
	pw *io.PipeWriter

	done chan struct{}
	mu   sync.Mutex
	err  error // what the scan found: a *LimitError, or nil
}

func newPackChecker(w io.WriteCloser, s *limitedStorage) *packChecker {
	pr, pw := io.Pipe()
	c := &packChecker{w: w, s: s, pw: pw, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		err := c.scan(pr)
		var limit *LimitError
		if errors.As(err, &limit) {
			c.mu.Lock()
			c.err = limit
			c.mu.Unlock()
			pr.CloseWithError(limit)
			return
		}
		// The pack's own parser reports a malformed pack; read the rest.
		_, _ = io.Copy(io.Discard, pr)
	}()
	return c
}

func (c *packChecker) Write(p []byte) (int, error) {
	if _, err := c.pw.Write(p); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// Close ends the scan and closes the storage's writer; after a refusal it
// removes the partial pack the storage leaves behind.
func (c *packChecker) Close() error {
	_ = c.pw.Close()
	<-c.done
	c.mu.Lock()
	refused := c.err
	c.mu.Unlock()
	err := c.w.Close()
	if refused != nil {
		tmp, _ := filepath.Glob(filepath.Join(c.s.dir, "objects", "pack", "tmp_pack_*"))
		for _, f := range tmp {
			_ = os.Remove(f)
		}
		return refused
	}
	return err
}

func (c *packChecker) scan(r io.Reader) error {
	s := packfile.NewScanner(r)
	_, count, err := s.Header()
	if err != nil {
		return err
	}
	for i := uint32(0); i < count; i++ {
		h, err := s.NextObjectHeader()
		if err != nil {
			return err
		}
		if !h.Type.IsDelta() {
			if err := c.check(h.Length); err != nil {
				return err
			}
			if _, _, err := s.NextObject(io.Discard); err != nil {
				return err
			}
			continue
		}
		// A delta starts with the sizes of its base and of its result.
		head := &deltaHead{}
		if _, _, err := s.NextObject(head); err != nil {
			return err
		}
		if size, ok := head.resultSize(); ok {
			if err := c.check(size); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *packChecker) check(size int64) error {
	if size > c.s.maxObject {
		return &LimitError{What: "file size", Size: size, Limit: c.s.maxObject, Flag: c.s.flag}
	}
	return nil
}

// deltaHead keeps the first bytes of a delta, enough for its two sizes.
type deltaHead struct {
	buf [32]byte
	n   int
}

func (d *deltaHead) Write(p []byte) (int, error) {
	d.n += copy(d.buf[d.n:], p)
	return len(p), nil
}

// resultSize decodes the delta's second size, that of the object it makes.
func (d *deltaHead) resultSize() (int64, bool) {
	b := d.buf[:d.n]
	_, rest, ok := uvarint(b)
	if !ok {
		return 0, false
	}
	size, _, ok := uvarint(rest)
	return int64(size), ok
}

// uvarint decodes a size as Git's delta headers write it: 7 bits a byte,
// least significant first.
func uvarint(b []byte) (uint64, []byte, bool) {
	var v uint64
	for i, c := range b {
		if i == 9 {
			return 0, nil, false
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, b[i+1:], true
		}
	}
	return 0, nil, false
}

// objectSize is the size of the object h, from its header.
func (c *clone) objectSize(h plumbing.Hash) (int64, error) {
	sized, ok := c.repo.Storer.(interface {
		EncodedObjectSize(plumbing.Hash) (int64, error)
	})
	if !ok {
		return 0, errors.New("the clone's storage cannot tell object sizes")
	}
	return sized.EncodedObjectSize(h)
}
