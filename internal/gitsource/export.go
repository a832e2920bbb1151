package gitsource

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ferry-gitops/ferry/internal/treearchive"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// export writes the tree of commit sha into the empty directory dest.
// Submodules are left out (their directories are created empty). Names are
// checked, and every file and directory is created exclusively, so that a
// crafted tree cannot write outside dest, through a symlink or otherwise.
// Each file's size is checked against the limits of opts from its object's
// header before it is read, and files are streamed, never held whole.
// The tree's archive for a render sandbox is written beside dest at
// treearchive.Path as the files are (none for a tree too large to send);
// whoever removes dest removes it too.
func (c *clone) export(ctx context.Context, sha plumbing.Hash, dest string, opts *Options) error {
	commit, err := c.repo.CommitObject(sha)
	if err != nil {
		return fmt.Errorf("read commit: %w", err)
	}
	root, err := commit.Tree()
	if err != nil {
		return fmt.Errorf("read tree: %w", err)
	}
	ar, err := treearchive.NewBuilder(treearchive.Path(dest))
	if err != nil {
		return err
	}
	var total int64
	if err := c.exportTree(ctx, root, "", dest, opts, ar, &total, 0); err != nil {
		_ = ar.Discard()
		return err
	}
	return ar.Close()
}

// maxTreeDepth bounds the nesting of directories an export follows.
const maxTreeDepth = 1024

// exportTree writes tree t, at path base of the commit, under dest, depth
// first. Every subtree is read with its error: go-git's TreeWalker ends a
// walk as if it were done at a subtree it cannot read, which would make a
// corrupt clone look like a commit with fewer files (and a sync prune the
// rest).
func (c *clone) exportTree(ctx context.Context, t *object.Tree, base, dest string, opts *Options, ar *treearchive.Builder, total *int64, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("walk tree: %s nests more than %d directories", base, maxTreeDepth)
	}
	for _, entry := range t.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := path.Join(base, entry.Name)
		if err := checkTreePath(name); err != nil {
			return err
		}
		var size int64
		if entry.Mode.IsFile() {
			var err error
			size, err = c.objectSize(entry.Hash)
			if err != nil {
				return fmt.Errorf("read %s: %w", name, err)
			}
			if size > opts.MaxFileBytes {
				return &LimitError{Path: name, What: "file size", Size: size, Limit: opts.MaxFileBytes, Flag: opts.FileFlag}
			}
			if *total += size; *total > opts.MaxCheckoutBytes {
				return &LimitError{What: "checkout size", Limit: opts.MaxCheckoutBytes, Flag: opts.CheckoutFlag}
			}
		}
		target := filepath.Join(dest, filepath.FromSlash(name))
		if err := c.writeEntry(target, name, entry, size, ar); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if entry.Mode != filemode.Dir {
			continue
		}
		sub, err := c.repo.TreeObject(entry.Hash)
		if err != nil {
			return fmt.Errorf("read tree %s: %w", name, err)
		}
		if err := c.exportTree(ctx, sub, name, dest, opts, ar, total, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// writeEntry writes entry, the tree's name of size bytes (a file's), at
// target and into the tree's archive.
func (c *clone) writeEntry(target, name string, entry object.TreeEntry, size int64, ar *treearchive.Builder) error {
	switch entry.Mode {
	case filemode.Dir, filemode.Submodule:
		ar.Add(name, fs.ModeDir, 0, "")
		return os.Mkdir(target, 0o755)
	case filemode.Symlink:
		link, err := c.blobBytes(entry.Hash)
		if err != nil {
			return err
		}
		// Written as it is; whoever reads the tree decides whether a link
		// may point where it does (render refuses links leaving the repo).
		ar.Add(name, fs.ModeSymlink, 0, string(link))
		return os.Symlink(string(link), target)
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
		perm := os.FileMode(0o644)
		if entry.Mode == filemode.Executable {
			perm = 0o755
		}
		return c.writeBlob(target, entry.Hash, perm, ar.Add(name, perm, size, ""))
	default:
		return fmt.Errorf("unsupported file mode %s", entry.Mode)
	}
}

func (c *clone) blobBytes(h plumbing.Hash) ([]byte, error) {
	blob, err := c.repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// writeBlob writes blob h to the new file target of perm, and to also.
func (c *clone) writeBlob(target string, h plumbing.Hash, perm os.FileMode, also io.Writer) (err error) {
	blob, err := c.repo.BlobObject(h)
	if err != nil {
		return err
	}
	rd, err := blob.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(io.MultiWriter(f, also), rd)
	return err
}

// checkTreePath refuses tree paths that Git itself would refuse to check
// out: empty, ".", ".." or ".git" components, backslashes and NULs.
func checkTreePath(name string) error {
	if name == "" || strings.HasPrefix(name, "/") {
		return fmt.Errorf("tree path %q: not a relative path", name)
	}
	for _, part := range strings.Split(name, "/") {
		switch strings.ToLower(part) {
		case "", ".", "..", ".git":
			return fmt.Errorf("tree path %q: refused component %q", name, part)
		}
		if strings.ContainsAny(part, "\\\x00") {
			return fmt.Errorf("tree path %q: refused character", name)
		}
	}
	return nil
}
