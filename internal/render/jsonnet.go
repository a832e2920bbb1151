package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-jsonnet"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// jsonnetEval evaluates the .jsonnet files of a directory source as Argo CD
// does: each file on its own, its value one object or an array of objects;
// external variables and top-level arguments from
// spec.source.directory.jsonnet, their values expanded with the build
// environment ($ARGOCD_APP_NAME, ...); imports relative to the importing
// file, then to the app directory, then to each of the libraries. Unlike
// Argo CD, no import may leave the repository, symlinks followed.
type jsonnetEval struct {
	files    fileSystem
	root     string // the repository root, symlinks resolved
	appPath  string // relative to root, slash-separated
	opts     *app.JsonnetSource
	env      map[string]string
	maxBytes int64
}

func (e *jsonnetEval) file(ctx context.Context, f manifestFile, limits Limits) ([]*unstructured.Unstructured, error) {
	vm := jsonnet.MakeVM()
	if e.opts != nil {
		for _, v := range e.opts.ExtVars {
			if v.Code {
				vm.ExtCode(v.Name, Envsubst(v.Value, e.env))
			} else {
				vm.ExtVar(v.Name, Envsubst(v.Value, e.env))
			}
		}
		for _, v := range e.opts.TLAs {
			if v.Code {
				vm.TLACode(v.Name, Envsubst(v.Value, e.env))
			} else {
				vm.TLAVar(v.Name, Envsubst(v.Value, e.env))
			}
		}
	}
	imp, err := e.importer()
	if err != nil {
		return nil, err
	}
	vm.Importer(imp)
	out, err := runBounded(ctx, limits, f.display, func(context.Context) (string, error) {
		return vm.EvaluateFile(f.display)
	})
	if err != nil {
		var limit *LimitError
		var source *SourceError
		if errors.As(err, &limit) || errors.As(err, &source) || errors.Is(err, context.Canceled) {
			return nil, err
		}
		// A syntax error quotes the source after a blank line: leave it out.
		msg, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n\n")
		return nil, &SourceError{Path: f.display, Msg: "jsonnet: " + msg}
	}
	var items []json.RawMessage
	if json.Unmarshal([]byte(out), &items) != nil {
		items = []json.RawMessage{json.RawMessage(out)}
	}
	var objs []*unstructured.Unstructured
	for i, item := range items {
		got, err := toObjects(item)
		if err != nil {
			return nil, &ManifestError{File: fmt.Sprintf("%s (jsonnet output, item %d)", f.display, i), Err: err}
		}
		objs = append(objs, got...)
	}
	return objs, nil
}

func (e *jsonnetEval) importer() (*repoImporter, error) {
	imp := &repoImporter{files: e.files, root: e.root, jpaths: []string{e.appPath}, maxBytes: e.maxBytes, cache: map[string]jsonnet.Contents{}}
	if e.opts == nil {
		return imp, nil
	}
	for _, lib := range e.opts.Libs {
		lib = path.Clean(strings.TrimPrefix(filepath.ToSlash(lib), "/"))
		if lib == ".." || strings.HasPrefix(lib, "../") {
			return nil, &SourceError{Path: e.appPath, Msg: fmt.Sprintf("directory.jsonnet.libs: %q is outside the repository", lib)}
		}
		imp.jpaths = append(imp.jpaths, lib)
	}
	return imp, nil
}

// repoImporter resolves Jsonnet imports inside one repository. Paths it
// hands to go-jsonnet, and so the paths in Jsonnet's error messages, are
// relative to the repository root.
type repoImporter struct {
	files    fileSystem
	root     string
	jpaths   []string // relative to root
	maxBytes int64
	cache    map[string]jsonnet.Contents // by path relative to root
}

var _ jsonnet.Importer = (*repoImporter)(nil)

func (i *repoImporter) Import(importedFrom, importedPath string) (jsonnet.Contents, string, error) {
	if path.IsAbs(importedPath) || filepath.IsAbs(importedPath) {
		return jsonnet.Contents{}, "", fmt.Errorf("import %q: imports must be relative paths inside the repository", importedPath)
	}
	dirs := []string{"."} // the file being evaluated, named from the root
	if importedFrom != "" {
		dirs = append([]string{path.Dir(importedFrom)}, i.jpaths...)
	}
	for _, dir := range dirs {
		rel := path.Join(dir, filepath.ToSlash(importedPath))
		if c, ok := i.cache[rel]; ok {
			return c, rel, nil
		}
		c, found, err := i.read(rel, importedPath)
		if err != nil {
			return jsonnet.Contents{}, "", err
		}
		if found {
			i.cache[rel] = c
			return c, rel, nil
		}
	}
	return jsonnet.Contents{}, "", fmt.Errorf("import %q: not found next to the importing file, in the app directory or in directory.jsonnet.libs", importedPath)
}

func (i *repoImporter) read(rel, importedPath string) (jsonnet.Contents, bool, error) {
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return jsonnet.Contents{}, false, fmt.Errorf("import %q: leads outside the repository", importedPath)
	}
	real, err := i.files.EvalSymlinks(filepath.Join(i.root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return jsonnet.Contents{}, false, nil
	}
	if err != nil {
		return jsonnet.Contents{}, false, fmt.Errorf("import %q: %v", importedPath, err)
	}
	if !within(i.root, real) {
		return jsonnet.Contents{}, false, fmt.Errorf("import %q: %s is a symlink leading outside the repository", importedPath, rel)
	}
	info, err := i.files.Stat(real)
	if err != nil || !info.Mode().IsRegular() {
		return jsonnet.Contents{}, false, nil
	}
	if info.Size() > i.maxBytes {
		return jsonnet.Contents{}, false, &LimitError{Path: rel, What: "file size", Limit: i.maxBytes}
	}
	data, err := i.files.ReadFile(real)
	if err != nil {
		return jsonnet.Contents{}, false, fmt.Errorf("import %q: %v", importedPath, err)
	}
	return jsonnet.MakeContentsRaw(data), true, nil
}

// PerApp reports whether src renders differently for each Application
// (and so cannot share one rendered set): a Helm source, whose release name
// and namespace are the app's, a plugin source, whose environment names
// the app, or Jsonnet variables that name the build
// environment.
func PerApp(src app.Source) bool {
	if src.Helm != nil || src.Plugin != nil {
		return true
	}
	if k := src.Kustomize; k != nil && k.CommonAnnotationsEnvsubst {
		return true // the annotations may name the app
	}
	if d := src.Directory; d != nil && d.Jsonnet != nil {
		for _, v := range append(append([]app.JsonnetVar(nil), d.Jsonnet.ExtVars...), d.Jsonnet.TLAs...) {
			if strings.Contains(v.Value, "$") {
				return true
			}
		}
	}
	return false
}

// PerAppType reports whether sources rendered as typ (a SourceType*) render
// per Application: charts, and plugins found by discovery.
func PerAppType(typ string) bool {
	return typ == SourceTypeHelm || typ == SourceTypePlugin
}
