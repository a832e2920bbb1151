package render

import (
	"context"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Version names the renderers' output format. It is part of every manifest
// cache key: change it whenever the same source would render differently.
const Version = "dir/1"

// Source types, named as Argo CD names them in an Application's status.
const (
	SourceTypeDirectory = "Directory"
	SourceTypeKustomize = "Kustomize"
	SourceTypeHelm      = "Helm"
)

// Result is what rendering a source gives.
type Result struct {
	// Objects in a deterministic order: by file path, then document order.
	Objects    []*unstructured.Unstructured
	SourceType string
}

// Limits bound what one render reads, so that a repository cannot exhaust
// a worker. A zero field takes its default.
type Limits struct {
	// MaxFiles is how many files the walk of the app path may meet,
	// manifests or not. Default 10,000.
	MaxFiles int
	// MaxFileBytes is the largest manifest file read. Default 10 MiB.
	MaxFileBytes int64
	// MaxTotalBytes is the most manifest bytes read in all. Default 100 MiB.
	MaxTotalBytes int64
}

// DefaultLimits returns the limits used by the package-level functions.
func DefaultLimits() Limits {
	return Limits{MaxFiles: 10_000, MaxFileBytes: 10 << 20, MaxTotalBytes: 100 << 20}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = d.MaxTotalBytes
	}
	return l
}

// Renderer renders Application sources within Limits. The zero value uses
// DefaultLimits.
type Renderer struct {
	Limits Limits
}

var defaultRenderer Renderer

// Render renders src from the checked-out repository at root with default
// limits. See Renderer.Render.
func Render(ctx context.Context, root string, src app.Source) (*Result, error) {
	return defaultRenderer.Render(ctx, root, src)
}

// Directory renders a plain directory with default limits. See
// Renderer.Directory.
func Directory(root, path string, opts *app.DirectorySource) ([]*unstructured.Unstructured, error) {
	return defaultRenderer.Directory(root, path, opts)
}

// Render renders src.Path of the repository checked out at root, choosing
// the source type as Argo CD does: an explicit directory, kustomize or
// helm section wins (two of them are an error); otherwise a
// kustomization.yaml, kustomization.yml or Kustomization file makes it
// Kustomize, a Chart.yaml makes it Helm, and anything else is a plain
// directory. Kustomize and Helm are not supported yet and give an
// *UnsupportedError.
func (r *Renderer) Render(ctx context.Context, root string, src app.Source) (*Result, error) {
	appPath, dir, err := resolveAppPath(root, src.Path)
	if err != nil {
		return nil, err
	}
	typ, reason, err := detectSourceType(appPath, dir, src)
	if err != nil {
		return nil, err
	}
	switch typ {
	case SourceTypeKustomize:
		return nil, &UnsupportedError{Path: appPath, What: "Kustomize sources", Reason: reason}
	case SourceTypeHelm:
		return nil, &UnsupportedError{Path: appPath, What: "Helm sources", Reason: reason}
	}
	objs, err := r.directory(ctx, root, src.Path, src.Directory)
	if err != nil {
		return nil, err
	}
	return &Result{Objects: objs, SourceType: SourceTypeDirectory}, nil
}

// kustomizationFiles are the names kustomize itself looks for.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

func detectSourceType(appPath, dir string, src app.Source) (typ, reason string, err error) {
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
	switch len(explicit) {
	case 1:
		return explicit[0], "spec.source sets it", nil
	case 0:
	default:
		return "", "", &SourceError{Path: appPath, Msg: "spec.source sets more than one of directory, kustomize and helm; keep the one that matches the path"}
	}
	for _, name := range kustomizationFiles {
		if isRegular(filepath.Join(dir, name)) {
			return SourceTypeKustomize, "found " + name, nil
		}
	}
	if isRegular(filepath.Join(dir, "Chart.yaml")) {
		return SourceTypeHelm, "found Chart.yaml", nil
	}
	return SourceTypeDirectory, "", nil
}

func isRegular(p string) bool {
	info, err := os.Lstat(p)
	return err == nil && (info.Mode().IsRegular() || info.Mode()&os.ModeSymlink != 0)
}
