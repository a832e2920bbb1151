package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Directory renders the plain manifests under path of the repository
// checked out at root, as Argo CD's directory source does:
//
//   - files ending in .yaml, .yml and .json are read; other files are
//     skipped; a .jsonnet file is evaluated (see jsonnetEval), a
//     .libsonnet file is only imported;
//   - subdirectories are read only with opts.Recurse; symlinked directories
//     are not followed; a symlink pointing outside root is an error;
//   - opts.Exclude, then opts.Include, are matched against the file's path
//     relative to path (see glob for the syntax);
//   - a YAML file may hold many documents; empty ones are skipped; each
//     other one must be a Kubernetes object with apiVersion and kind;
//     a kind ending in "List" with items is flattened into its items.
//
// Objects come sorted by file path, then in document order. Errors name the
// file (relative to root) and the line, with secret values masked as
// Render's are.
func (r *Renderer) Directory(root, path string, opts *app.DirectorySource) ([]*unstructured.Unstructured, error) {
	src := app.Source{Path: path, Directory: opts}
	objs, err := r.directory(context.Background(), root, src, Options{})
	if err != nil {
		return nil, r.MaskError(root, src, Options{}, err)
	}
	return objs, nil
}

type manifestFile struct {
	display string // path relative to the repository root
	real    string // path to read
	size    int64
	json    bool
	jsonnet bool
}

func (r *Renderer) directory(ctx context.Context, root string, src app.Source, ropts Options) ([]*unstructured.Unstructured, error) {
	limits := r.Limits.withDefaults()
	opts := src.Directory
	if opts == nil {
		opts = &app.DirectorySource{}
	}
	fsys := r.files()
	appPath, dir, err := resolveAppPath(fsys, root, src.Path)
	if err != nil {
		return nil, err
	}
	realRoot, err := fsys.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	include, exclude, err := compileFilters(appPath, opts)
	if err != nil {
		return nil, err
	}

	var files []manifestFile
	var seen int
	var total int64
	walkErr := fsys.WalkDir(dir, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if full == dir {
			return nil
		}
		rel := filepath.ToSlash(mustRel(dir, full))
		display := joinDisplay(appPath, rel)
		if d.IsDir() {
			if !opts.Recurse || d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if seen++; seen > limits.MaxFiles {
			return &LimitError{Path: appPath, What: "files", Limit: int64(limits.MaxFiles)}
		}
		real := full
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := fsys.EvalSymlinks(full)
			if err == nil && !within(realRoot, target) {
				return &SourceError{Path: display, Msg: "symlink points outside the repository"}
			}
			if err != nil {
				if hasManifestExt(rel) {
					return &SourceError{Path: display, Msg: "broken symlink"}
				}
				return nil
			}
			real = target
		}
		info, err := fsys.Stat(real)
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil // a symlinked directory, a socket: not followed
		}
		if !hasManifestExt(rel) && !strings.HasSuffix(rel, ".jsonnet") {
			return nil
		}
		if exclude != nil && exclude.Match(rel) || include != nil && !include.Match(rel) {
			return nil
		}
		if info.Size() > limits.MaxFileBytes {
			return &LimitError{Path: display, What: "file size", Limit: limits.MaxFileBytes}
		}
		if total += info.Size(); total > limits.MaxTotalBytes {
			return &LimitError{Path: appPath, What: "total size", Limit: limits.MaxTotalBytes}
		}
		files = append(files, manifestFile{display: display, real: real, size: info.Size(),
			json: strings.HasSuffix(rel, ".json"), jsonnet: strings.HasSuffix(rel, ".jsonnet")})
		return nil
	})
	if walkErr != nil {
		return nil, walkErr
	}

	sort.Slice(files, func(i, j int) bool { return files[i].display < files[j].display })
	jn := &jsonnetEval{files: fsys, root: realRoot, appPath: appPath, opts: opts.Jsonnet, env: BuildEnv(src, ropts), maxBytes: limits.MaxFileBytes}
	var out []*unstructured.Unstructured
	for _, f := range files {
		var objs []*unstructured.Unstructured
		var err error
		if f.jsonnet {
			objs, err = jn.file(ctx, f, limits)
		} else {
			objs, err = r.readManifest(fsys, f, limits.MaxFileBytes)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// readManifest reads a manifest file, in clear when SOPS encrypted it.
func (r *Renderer) readManifest(files fileSystem, f manifestFile, maxBytes int64) ([]*unstructured.Unstructured, error) {
	data, err := files.ReadFile(f.real)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxBytes { // grew since the walk
		return nil, &LimitError{Path: f.display, What: "file size", Limit: maxBytes}
	}
	if data, err = decryptFile(r.SOPS, f.display, data); err != nil {
		return nil, err
	}
	if f.json {
		return decodeJSON(f.display, data)
	}
	return decodeYAML(f.display, data)
}

func compileFilters(appPath string, opts *app.DirectorySource) (include, exclude *app.Glob, err error) {
	if s := strings.TrimSpace(opts.Include); s != "" {
		if include, err = app.CompileGlob(s); err != nil {
			return nil, nil, &SourceError{Path: appPath, Msg: fmt.Sprintf("directory.include: glob %q: %v", s, err)}
		}
	}
	if s := strings.TrimSpace(opts.Exclude); s != "" {
		if exclude, err = app.CompileGlob(s); err != nil {
			return nil, nil, &SourceError{Path: appPath, Msg: fmt.Sprintf("directory.exclude: glob %q: %v", s, err)}
		}
	}
	return include, exclude, nil
}

func hasManifestExt(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") || strings.HasSuffix(name, ".json")
}

func mustRel(base, target string) string {
	rel, err := filepath.Rel(base, target)
	if err != nil {
		panic(errors.New("render: walked outside the app path: " + target))
	}
	return rel
}
