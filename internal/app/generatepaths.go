package app

import (
	"path"
	"strings"
)

// GeneratePaths are the repository paths whose changes affect the manifests
// a source of the app renders, from its AnnotationManifestGeneratePaths:
// an item starting with "/" is from the repository's root, any other is
// relative to the source's path (for a source without one, such as a ref
// source, to the root). Nil when the app has no such annotation: then any
// change may affect them.
func (a *Application) GeneratePaths(src *Source) []string {
	value := strings.TrimSpace(a.Metadata.Annotations[AnnotationManifestGeneratePaths])
	if value == "" {
		return nil
	}
	var out []string
	for _, item := range strings.Split(value, ";") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case strings.HasPrefix(item, "/"):
			out = append(out, path.Clean(strings.TrimPrefix(item, "/")))
		default:
			out = append(out, path.Clean(path.Join(src.Path, item)))
		}
	}
	return out
}

// FilesTouch reports whether a change of the given files (repository paths)
// may change manifests generated from paths (GeneratePaths): a file is one
// of the paths, lies under one, or matches one as a pattern of path.Match
// ("charts/*/values.yaml"). No paths, or no files known, answers true.
func FilesTouch(paths, files []string) bool {
	if len(paths) == 0 || len(files) == 0 {
		return true
	}
	for _, f := range files {
		f = path.Clean(strings.TrimPrefix(f, "/"))
		for _, p := range paths {
			if p == "." || f == p || strings.HasPrefix(f, p+"/") {
				return true
			}
			if matched, err := path.Match(p, f); err == nil && matched {
				return true
			}
		}
	}
	return false
}
