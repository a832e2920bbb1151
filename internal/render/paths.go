package render

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// resolveAppPath checks an Application's path and returns it cleaned
// (relative, slash-separated, "." for the root) and the real directory it
// names. The path must be relative, must not contain "..", and must resolve,
// symlinks followed, to a directory inside root.
func resolveAppPath(files fileSystem, root, p string) (appPath, dir string, err error) {
	p = strings.TrimSpace(filepath.ToSlash(p))
	if p == "" {
		p = "."
	}
	if path.IsAbs(p) || filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return "", "", &SourceError{Path: p, Msg: "the path must be relative to the repository root"}
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", "", &SourceError{Path: p, Msg: `the path must not contain ".."`}
		}
	}
	appPath = path.Clean(p)
	realRoot, err := files.EvalSymlinks(root)
	if err != nil {
		return "", "", err // the checkout itself is missing: not the user's doing
	}
	dir, err = files.EvalSymlinks(filepath.Join(realRoot, filepath.FromSlash(appPath)))
	if err != nil {
		if os.IsNotExist(err) {
			return "", "", &SourceError{Path: appPath, Msg: "no such directory in the repository at this revision"}
		}
		return "", "", &SourceError{Path: appPath, Msg: err.Error()}
	}
	if !within(realRoot, dir) {
		return "", "", &SourceError{Path: appPath, Msg: "the path is a symlink leading outside the repository"}
	}
	info, err := files.Stat(dir)
	if err != nil {
		return "", "", &SourceError{Path: appPath, Msg: err.Error()}
	}
	if !info.IsDir() {
		return "", "", &SourceError{Path: appPath, Msg: "not a directory"}
	}
	return appPath, dir, nil
}

// within reports whether p is root or under it; both must be clean, real
// paths.
func within(root, p string) bool {
	if p == root {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// joinDisplay joins the app path and a path under it for messages.
func joinDisplay(appPath, rel string) string {
	if appPath == "." {
		return rel
	}
	return appPath + "/" + rel
}
