package render

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/sopsfile"
)

// kustomizationFiles are the names kustomize itself looks for, in its order.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// target is an app path resolved for rendering.
type target struct {
	root     string  // the repository root, symlinks resolved
	appPath  string  // clean, relative, slash-separated; "." for the root
	dir      string  // the app directory, symlinks resolved, inside root
	typ      string  // SourceType*
	reason   string  // why typ: "found kustomization.yaml", "spec.source sets it"
	kustFile string  // for Kustomize: the kustomization file's name in dir
	plugin   *Plugin // for Plugin: the plugin that renders it
	// sops are the identities SOPS-encrypted files open with
	// (Renderer.SOPS).
	sops *sopsfile.Keys
	// produced is what a failed render had produced (rendered templates,
	// Kustomize's output), for secretValues; a render that failed after
	// producing anything adds it (produce); a render abandoned at its
	// timeout may still add, hence the lock.
	mu       sync.Mutex
	produced [][]byte
}

// produce keeps what a failing render produced, for secretValues.
func (t *target) produce(out ...[]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.produced = append(t.produced, out...)
}

// output is what produce kept.
func (t *target) output() [][]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.produced)
}

// SourceType tells how Render would render src from the checkout at root,
// without rendering it: Argo CD's detection, or the type an explicit
// spec.source section names.
func (r *Renderer) SourceType(root string, src app.Source) (string, error) {
	t, err := r.detect(context.Background(), root, src, Options{})
	if err != nil {
		return "", err
	}
	return t.typ, nil
}

// detect resolves the app path and picks the source type as Argo CD does:
// a kustomization.yaml, kustomization.yml or Kustomization file makes it
// Kustomize, else a Chart.yaml makes it Helm, else it is a plain
// directory. An explicit directory, kustomize or helm section chooses the
// type instead, and must agree with what the directory holds: a kustomize
// section needs a kustomization file, a helm section a Chart.yaml, and a
// directory section on a Kustomize or Helm source must exclude the file that
// makes it one (otherwise the kustomization or Chart.yaml would be sent to
// the cluster as a manifest, or fail to parse as one).
//
// Config-management plugins come first, as in Argo CD: a plugin section
// chooses a plugin (see pickPlugin), and a source with no section at all
// is a plugin's when a plugin's discover matches it, before any
// kustomization or Chart.yaml is looked for.
func (r *Renderer) detect(ctx context.Context, root string, src app.Source, opts Options) (*target, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	files := r.files()
	appPath, dir, err := resolveAppPath(files, root, src.Path)
	if err != nil {
		return nil, err
	}
	realRoot, err := files.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	t := &target{root: realRoot, appPath: appPath, dir: dir, sops: r.SOPS}

	var explicit []string
	if src.Directory != nil {
		explicit = append(explicit, SourceTypeDirectory)
	}
	if src.Kustomize != nil {
		explicit = append(explicit, SourceTypeKustomize)
	}
	if src.Helm != nil {
		explicit = append(explicit, SourceTypeHelm)
	}
	if src.Plugin != nil {
		explicit = append(explicit, SourceTypePlugin)
	}
	if len(explicit) > 1 {
		return nil, &SourceError{Path: appPath, Msg: "spec.source sets more than one of directory, kustomize and helm (or plugin); keep the one that matches the path"}
	}
	if len(explicit) == 0 || src.Plugin != nil {
		p, reason, err := r.pickPlugin(ctx, t, src, opts)
		if err != nil || p != nil {
			t.typ, t.reason, t.plugin = SourceTypePlugin, reason, p
			return t, err
		}
	}

	for _, name := range kustomizationFiles {
		if isFile(files, filepath.Join(dir, name)) {
			t.kustFile = name
			break
		}
	}
	hasChart := isFile(files, filepath.Join(dir, "Chart.yaml"))
	found, marker := SourceTypeDirectory, ""
	switch {
	case t.kustFile != "":
		found, marker = SourceTypeKustomize, t.kustFile
	case hasChart:
		found, marker = SourceTypeHelm, "Chart.yaml"
	}

	if len(explicit) == 0 {
		t.typ = found
		if marker != "" {
			t.reason = "found " + marker
		}
		return t, nil
	}
	t.typ, t.reason = explicit[0], "spec.source sets it"
	switch t.typ {
	case SourceTypeKustomize:
		if t.kustFile == "" {
			return nil, typeMismatch(appPath, "kustomize", "no kustomization.yaml, kustomization.yml or Kustomization", found, marker)
		}
	case SourceTypeHelm:
		if !hasChart {
			return nil, typeMismatch(appPath, "helm", "no Chart.yaml", found, marker)
		}
	case SourceTypeDirectory:
		if found != SourceTypeDirectory {
			included, err := directoryIncludes(appPath, src.Directory, marker)
			if err != nil {
				return nil, err
			}
			if included {
				return nil, &SourceError{Path: appPath, Msg: "spec.source.directory is set, but the path is a " + found +
					" source (found " + marker + "); remove spec.source.directory to render it with " + found +
					", or leave " + marker + " out with directory.exclude"}
			}
		}
	}
	return t, nil
}

func typeMismatch(appPath, section, lacks, found, marker string) error {
	is := "a plain directory"
	if marker != "" {
		is = "a " + found + " source (found " + marker + ")"
	}
	return &SourceError{Path: appPath, Msg: "spec.source." + section + " is set, but the path holds " + lacks +
		": it is " + is + "; remove spec.source." + section + " or point spec.source.path at the right directory"}
}

// directoryIncludes reports whether a directory source would read the file
// name at the top of its path.
func directoryIncludes(appPath string, opts *app.DirectorySource, name string) (bool, error) {
	if !hasManifestExt(name) {
		return false, nil // "Kustomization" has no extension: never read
	}
	include, exclude, err := compileFilters(appPath, opts)
	if err != nil {
		return false, err
	}
	if exclude != nil && exclude.Match(name) || include != nil && !include.Match(name) {
		return false, nil
	}
	return true, nil
}

// isFile reports whether p is a regular file or a symlink (whose target is
// checked when it is read).
func isFile(files fileSystem, p string) bool {
	info, err := files.Lstat(p)
	return err == nil && (info.Mode().IsRegular() || info.Mode()&os.ModeSymlink != 0)
}

// displayPath names a path under the repository root for messages.
func displayPath(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return filepath.Base(p)
	}
	return filepath.ToSlash(rel)
}
