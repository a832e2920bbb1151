package render

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ferry-gitops/ferry/internal/app"
)

// ReadRefFiles reads the Helm value files src names in the app's other
// sources ($ref/path) from their checkouts, roots keyed by ref, for
// Options.RefFiles: each confined to its checkout as value files are to
// theirs (no absolute path, no '..' or symlink out of it), within limits'
// file sizes. A file that does not exist is left out, for the render to
// refuse or, with ignoreMissingValueFiles, skip. As Argo CD does, the
// build environment env is substituted into the path after the $ref
// (Envsubst); files stays keyed by the valueFiles entry as written.
func ReadRefFiles(src app.Source, roots map[string]string, limits Limits, env map[string]string) (map[string]string, error) {
	if src.Helm == nil {
		return nil, nil
	}
	var files map[string]string
	for i, vf := range src.Helm.ValueFiles {
		ref, rel, ok := app.RefValueFile(vf)
		if !ok {
			continue
		}
		what := fmt.Sprintf("spec.source.helm.valueFiles[%d]", i)
		root, ok := roots[ref]
		if !ok {
			return nil, &SourceError{Path: vf, Msg: fmt.Sprintf("%s: no source has ref: %s", what, ref)}
		}
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			return nil, fmt.Errorf("read %s: the checkout of ref %s: %w", what, ref, err)
		}
		rel = Envsubst(rel, env)
		if rel == "" {
			return nil, &SourceError{Path: vf, Msg: what + " names no file of ref " + ref}
		}
		file, display, err := resolveInRepo(real, real, rel, what)
		if errors.Is(err, errNotInRepo) {
			continue
		}
		if err != nil {
			return nil, err
		}
		data, err := newBudget(limits, "$"+ref).readFile(file, "$"+ref+"/"+display)
		if err != nil {
			return nil, err
		}
		if files == nil {
			files = map[string]string{}
		}
		files[vf] = string(data)
	}
	return files, nil
}
