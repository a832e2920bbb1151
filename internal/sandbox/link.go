package sandbox

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// linkTree makes the empty directory dst a copy of the tree at src: hard
// links of its files where the file system allows (as cp -al does; the
// checkout is not written to, so a link is as good as a copy), copies
// elsewhere, symlinks as they are, directories with their modes. Other
// kinds of file (fifos, sockets, devices) are left out.
func linkTree(src, dst string) error {
	// Directories get their modes once filled: one without write
	// permission could not be.
	type dirMode struct {
		path string
		mode fs.FileMode
	}
	var dirs []dirMode
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			info, err := d.Info()
			if err != nil {
				return err
			}
			dirs = append(dirs, dirMode{target, info.Mode().Perm()})
			if rel == "." {
				return nil
			}
			return os.Mkdir(target, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			dest, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(dest, target)
		case d.Type().IsRegular():
			if os.Link(path, target) == nil {
				return nil
			}
			return copyFile(path, target)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i].path, dirs[i].mode); err != nil {
			return err
		}
	}
	return nil
}

// copyFile copies the regular file src to the new file dst, with its mode.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, info.Mode().Perm())
}
