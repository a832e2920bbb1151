package localtree

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/ferry-gitops/ferry/internal/treearchive"
)

// Unpack writes the tree of archive out into dir, an empty directory,
// checking what Pack checks again: the archive came from a client. Every
// name must be a clean relative path whose parent the archive made before
// it; symlinks stay inside the tree; the files stay within MaxBytes and
// MaxFiles.
func Unpack(archive []byte, dir string) error {
	tr := tar.NewReader(bytes.NewReader(archive))
	dirs := map[string]bool{".": true}
	var pages int64
	for n := 0; ; n++ {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the local tree: %w", err)
		}
		if n >= MaxFiles {
			return fmt.Errorf("the local tree has more than %d entries", MaxFiles)
		}
		name := h.Name
		if name == "" || path.IsAbs(name) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") || !dirs[path.Dir(name)] {
			return fmt.Errorf("the local tree names %q, not a new path in its directories", name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			dirs[name] = true
			err = os.Mkdir(p, 0o755)
		case tar.TypeSymlink:
			if err = CheckLink(name, h.Linkname); err == nil {
				err = os.Symlink(h.Linkname, p)
			}
		case tar.TypeReg:
			if pages += treearchive.Pages(h.Size); pages*treearchive.Page > MaxBytes {
				return fmt.Errorf("the local tree holds more than %d MiB", MaxBytes>>20)
			}
			err = writeFile(p, os.FileMode(h.Mode).Perm()&0o755, tr)
		default:
			return fmt.Errorf("the local tree has %q of type %c, not a directory, file or symlink", name, h.Typeflag)
		}
		if err != nil {
			return fmt.Errorf("unpack %s of the local tree: %w", name, err)
		}
	}
}

func writeFile(p string, perm os.FileMode, r io.Reader) error {
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	return errors.Join(err, out.Close())
}
