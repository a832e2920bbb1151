package render

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Remote Kustomize bases, when the worker allows them, are fetched by the
// worker itself, never by kustomize: kustomize would clone with the git
// binary, from inside the render, with no credentials and no limits, and
// inside a sandbox it has no network. FetchRemoteBases walks the
// kustomizations of a source (the same scan that refuses what Ferry does
// not let kustomize do), fetches every Git base it names through the
// worker's fetch function (gitsource: its credentials, clone cache and
// checkout limits), and follows the bases of fetched bases, up to
// MaxRemoteDepth levels and MaxRemoteBases repositories. Render then
// reads each base from its checkout (Options.RemoteBases): the
// kustomizations that name them are rewritten in memory to the checkout's
// local path, and nothing on disk changes.
//
// Plain HTTP(S) files (a resource, patch or generator file given as a URL)
// stay refused: fetching any URL a commit names from the worker would let
// a commit reach the worker's own network.

// Limits on remote bases.
const (
	// MaxRemoteDepth is how deep bases of fetched bases are followed.
	MaxRemoteDepth = 5
	// MaxRemoteBases is how many remote bases (repository and ref) one
	// source may name, all levels together.
	MaxRemoteBases = 20
)

// RemoteBase is a fetched remote base: the commit its ref resolved to and
// the directory holding that commit's files.
type RemoteBase struct {
	// Repo and Ref are the RemoteRef's.
	Repo string `json:"repo"`
	Ref  string `json:"ref,omitempty"`
	// SHA is the commit Ref resolved to.
	SHA string `json:"sha"`
	// Dir is the checkout of the commit: a directory the renderer reads
	// and never writes.
	Dir string `json:"dir"`
}

// FetchFunc fetches the repository of a remote base at its ref.
type FetchFunc func(ctx context.Context, ref RemoteRef) (RemoteBase, error)

// FetchRemoteBases fetches the remote bases the kustomizations of src
// name (rendered with opts), through fetch, in the order they are met; nil for a source that
// is not Kustomize, names none, or when r does not allow remote bases (a
// render then refuses them). Errors name the kustomization, the field and
// the reference.
//
// Its errors are masked as Render's are.
func (r *Renderer) FetchRemoteBases(ctx context.Context, root string, src app.Source, opts Options, fetch FetchFunc) ([]RemoteBase, error) {
	bases, err := r.fetchRemoteBases(ctx, root, src, opts, fetch)
	if err != nil {
		return nil, r.MaskError(root, src, opts, err)
	}
	return bases, nil
}

func (r *Renderer) fetchRemoteBases(ctx context.Context, root string, src app.Source, opts Options, fetch FetchFunc) ([]RemoteBase, error) {
	if !r.AllowRemoteBases {
		return nil, nil
	}
	t, err := r.detect(ctx, root, src, opts)
	if err != nil || t.typ != SourceTypeKustomize {
		return nil, nil // Render reports it
	}
	// The kustomization as the render reads it: spec.source.kustomize's
	// edits can add components.
	fsys, err := r.kustomizeFS(t, src.Kustomize, BuildEnv(src, opts))
	if err != nil {
		return nil, err
	}
	s := &kustScan{fs: fsys, allowRemote: true, seen: map[string]bool{}, fetch: func(ref RemoteRef) (RemoteBase, error) {
		fctx := ctx
		if ref.Timeout > 0 {
			var cancel context.CancelFunc
			fctx, cancel = context.WithTimeout(ctx, ref.Timeout)
			defer cancel()
		}
		return fetch(fctx, ref)
	}}
	if err := s.dir(t.dir); err != nil {
		return nil, err
	}
	return s.bases, nil
}

// remoteTarget resolves an allowed remote entry of a kustomization to the
// checkout of its base, records the rewrite of the entry to that local
// path, and scans the base.
func (s *kustScan) remoteTarget(real, display, field, entry string) error {
	ref, err := ParseRemoteRef(entry)
	if err != nil {
		what := "the remote base"
		if isHTTP(entry) {
			what = "the remote reference (a plain HTTP file, which Ferry does not fetch, or a Git base)"
		}
		return &SourceError{Path: display, Msg: fmt.Sprintf("%s: %s %q: %v", field, what, entry, err)}
	}
	base, err := s.base(display, field, entry, ref)
	if err != nil {
		return err
	}
	dir := filepath.Join(base.Dir, filepath.FromSlash(ref.Path))
	if !s.fs.IsDir(dir) {
		return &SourceError{Path: display, Msg: fmt.Sprintf("%s: the remote base %q: %s at %s has no directory %q", field, entry, ref.Repo, shortSHA(base.SHA), ref.Path)}
	}
	rel, err := filepath.Rel(real, dir)
	if err != nil {
		return err
	}
	s.rewrite(real, entry, filepath.ToSlash(rel))
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > MaxRemoteDepth {
		return &SourceError{Path: display, Msg: fmt.Sprintf("%s: the remote base %q is more than %d remote bases deep; vendor some of them", field, entry, MaxRemoteDepth)}
	}
	return s.dir(dir)
}

// base is the fetched base of ref: fetched once per repository and ref,
// on the worker (fetch), or given to the render (known).
func (s *kustScan) base(display, field, entry string, ref RemoteRef) (RemoteBase, error) {
	for _, b := range s.bases {
		if b.Repo == ref.Repo && b.Ref == ref.Ref {
			return b, nil
		}
	}
	var b RemoteBase
	if s.fetch == nil {
		i := -1
		for j, k := range s.known {
			if k.Repo == ref.Repo && k.Ref == ref.Ref {
				i = j
			}
		}
		if i < 0 {
			return RemoteBase{}, fmt.Errorf("render %s: %s: the remote base %q was not fetched before the render", display, field, entry)
		}
		b = s.known[i]
	} else {
		if len(s.bases) >= MaxRemoteBases {
			return RemoteBase{}, &SourceError{Path: display, Msg: fmt.Sprintf("%s: %q: more than %d remote bases; vendor some of them", field, entry, MaxRemoteBases)}
		}
		var err error
		if b, err = s.fetch(ref); err != nil {
			return RemoteBase{}, fmt.Errorf("render %s: %s: fetch the remote base %q: %w", display, field, entry, err)
		}
	}
	real, err := filepath.EvalSymlinks(b.Dir)
	if err != nil {
		return RemoteBase{}, fmt.Errorf("render %s: the checkout of the remote base %q: %w", display, entry, err)
	}
	b.Dir = real
	s.fs.addRemote(real, ref.Repo+"@"+shortSHA(b.SHA))
	s.bases = append(s.bases, b)
	return b, nil
}

// rewrite records that the entry of the kustomization in dir becomes the
// local path rel.
func (s *kustScan) rewrite(dir, entry, rel string) {
	if s.rewrites == nil {
		s.rewrites = map[string]map[string]string{}
	}
	if s.rewrites[dir] == nil {
		s.rewrites[dir] = map[string]string{}
	}
	s.rewrites[dir][entry] = rel
}

// applyRewrites overrides every kustomization that names a remote base
// with a copy naming the base's local checkout instead.
func (s *kustScan) applyRewrites() error {
	for dir, entries := range s.rewrites {
		err := s.editKustomization(dir, func(display string, data []byte) ([]byte, error) {
			return rewriteRemoteEntries(display, data, entries)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// editKustomization overrides the kustomization of dir with what edit
// makes of it (as read so far: earlier edits included).
func (s *kustScan) editKustomization(dir string, edit func(display string, data []byte) ([]byte, error)) error {
	file := s.kustFiles[dir]
	data, err := s.fs.ReadFile(file)
	if err != nil {
		return err
	}
	edited, err := edit(s.fs.display(file), data)
	if err != nil {
		return err
	}
	s.fs.override(file, edited)
	return nil
}

// rewriteRemoteEntries replaces the entries of resources, bases,
// components, generators, transformers and validators (field names in any
// case, as kustomize reads them) that entries maps.
func rewriteRemoteEntries(display string, data []byte, entries map[string]string) ([]byte, error) {
	doc, err := kyaml.Parse(string(data))
	if err != nil {
		return nil, yamlError(display, yamlDoc{index: 1, line: 1}, err)
	}
	fields := doc.YNode().Content
	for i := 0; i+1 < len(fields); i += 2 {
		switch strings.ToLower(fields[i].Value) {
		case "resources", "bases", "components", "generators", "transformers", "validators":
		default:
			continue
		}
		for _, item := range fields[i+1].Content {
			if local, ok := entries[item.Value]; ok && item.Kind == kyaml.ScalarNode {
				item.Value, item.Style, item.Tag = local, kyaml.DoubleQuotedStyle, kyaml.NodeTagString
			}
		}
	}
	out, err := doc.String()
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", display, err)
	}
	return []byte(out), nil
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
