// Package image builds Ferry's container image without Docker: one layer
// holding the static binaries and the few files a non-root Go program
// needs, on no base image, written with go-containerregistry. The same
// inputs give the same digest: entries are sorted, owned by root, dated
// at Epoch, and the config's dates are Epoch too.
//
//	img, _ := image.Build(image.Spec{Files: []image.File{{Path: "/usr/local/bin/ferry-worker", Source: "bin/image/ferry-worker", Mode: 0o755}}})
//	digest, _ := image.Push(ctx, img, "127.0.0.1:5000/ferry/ferry-worker:dev")
package image

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Epoch is the date of every file and of the image.
var Epoch = time.Unix(0, 0).UTC()

// File is one regular file of the image.
type File struct {
	// Path is where it is in the image, absolute.
	Path string
	// Source is the file on this machine to copy; Data is used when it is
	// empty.
	Source string
	Data   []byte
	// Mode is its permission bits.
	Mode int64
}

// Dir is one directory of the image (its parents are made 0755).
type Dir struct {
	Path string
	Mode int64
}

// Spec is what Build makes an image of.
type Spec struct {
	Files []File
	Dirs  []Dir
	// User is the config's user, "uid:gid".
	User       string
	Entrypoint []string
	Env        []string
	// Arch is the architecture of the binaries (GOARCH).
	Arch string
}

// Build makes the image of spec: one OCI layer of its files and
// directories, and its config.
func Build(spec Spec) (v1.Image, error) {
	layerTar, err := layerTar(spec)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: Epoch}, CreatedBy: "ferry hack/image", Comment: "Ferry's static binaries",
	}})
	if err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", cmp.Or(spec.Arch, "amd64")
	cf.Created = v1.Time{Time: Epoch}
	cf.Config = v1.Config{User: spec.User, Entrypoint: spec.Entrypoint, Env: spec.Env, WorkingDir: "/"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("image config: %w", err)
	}
	return img, nil
}

// layerTar is the layer's uncompressed tar: every directory (parents
// included) and file, sorted by path, dated Epoch, owned by root.
func layerTar(spec Spec) ([]byte, error) {
	type entry struct {
		hdr  tar.Header
		data []byte
	}
	entries := map[string]entry{}
	addDir := func(p string, mode int64) {
		for d := p; d != "/" && d != "."; d = path.Dir(d) {
			if _, ok := entries[d]; !ok || d == p {
				m := int64(0o755)
				if d == p {
					m = mode
				}
				entries[d] = entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: m}}
			}
		}
	}
	for _, d := range spec.Dirs {
		if !path.IsAbs(d.Path) {
			return nil, fmt.Errorf("image directory %q: the path must be absolute", d.Path)
		}
		addDir(path.Clean(d.Path), d.Mode)
	}
	for _, f := range spec.Files {
		if !path.IsAbs(f.Path) {
			return nil, fmt.Errorf("image file %q: the path must be absolute", f.Path)
		}
		p := path.Clean(f.Path)
		data := f.Data
		if f.Source != "" {
			var err error
			if data, err = os.ReadFile(f.Source); err != nil {
				return nil, fmt.Errorf("image file %s: %w", p, err)
			}
		}
		if _, ok := entries[path.Dir(p)]; !ok && path.Dir(p) != "/" {
			addDir(path.Dir(p), 0o755)
		}
		entries[p] = entry{hdr: tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(p, "/"), Mode: f.Mode, Size: int64(len(data))}, data: data}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range entries {
			if !yield(p) {
				return
			}
		}
	}) {
		e := entries[p]
		e.hdr.ModTime = Epoch
		e.hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(&e.hdr); err != nil {
			return nil, fmt.Errorf("image layer %s: %w", p, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("image layer %s: %w", p, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("image layer: %w", err)
	}
	return buf.Bytes(), nil
}

// Push writes img to the registry as ref (registry/repository:tag; a
// loopback or private registry is spoken to over plain HTTP) and returns
// its digest.
func Push(ctx context.Context, img v1.Image, ref string) (v1.Hash, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("push image: %q is not an image reference (registry/repository:tag): %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithContext(ctx)); err != nil {
		return v1.Hash{}, fmt.Errorf("push image to %s: %w", r, err)
	}
	d, err := img.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image digest: %w", err)
	}
	return d, nil
}
