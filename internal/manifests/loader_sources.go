package manifests

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/render"
)

// RefAt is a source offering its files to the others ($ref/path in their
// Helm value files) at a commit.
type RefAt struct {
	Ref     string `json:"ref"`
	RepoURL string `json:"repoURL"`
	SHA     string `json:"sha"`
}

// SourceAt is one source of a multi-source app at its resolved revision: a
// commit SHA, or a chart version for a chart source.
type SourceAt struct {
	Source   app.Source
	Revision string
}

// SourcesRequest names the rendered set of a multi-source app: its
// sources, in spec.sources' order, at their revisions.
type SourcesRequest struct {
	Sources []SourceAt
	// App, Namespace, Hard and Fresh: as in Request, for every source.
	App       string
	Namespace string
	Hard      bool
	Fresh     bool
	// RepoCheck: as in Request, for every source.
	RepoCheck netpolicy.RepoCheck
}

// LoadSources renders every source of a multi-source app that renders
// (LoadApp each, so each source's set is cached and shared as a single
// source's is) and puts their objects together into one set, whose digest
// covers them all. A source with a ref and no path renders nothing; its
// files reach the others' $ref value files, its commit their keys. An
// object that two sources render is an error naming both, so that neither
// silently replaces the other.
func (l *Loader) LoadSources(ctx context.Context, req SourcesRequest) (*Loaded, error) {
	refs := map[string]RefAt{}
	for _, s := range req.Sources {
		if s.Source.Ref != "" {
			refs[s.Source.Ref] = RefAt{Ref: s.Source.Ref, RepoURL: s.Source.RepoURL, SHA: s.Revision}
		}
	}
	type owner struct {
		index int
		label string
	}
	seen := map[string]owner{}
	var all []*unstructured.Unstructured
	var types []string
	out := &Loaded{CacheHit: true}
	for i, s := range req.Sources {
		if s.Source.RendersNothing() {
			continue
		}
		one := Request{RepoURL: s.Source.RepoURL, SHA: s.Revision, Source: s.Source, App: req.App, Namespace: req.Namespace,
			Hard: req.Hard, Fresh: req.Fresh, RepoCheck: req.RepoCheck}
		for _, ref := range app.RefsOf(s.Source) {
			r, ok := refs[ref]
			if !ok {
				return nil, &render.SourceError{Path: fmt.Sprintf("spec.sources[%d]", i),
					Msg: fmt.Sprintf("helm.valueFiles name $%s, and no source has ref: %s", ref, ref)}
			}
			one.Refs = append(one.Refs, r)
		}
		loaded, err := l.LoadApp(ctx, one)
		if err != nil {
			return nil, fmt.Errorf("spec.sources[%d] (%s): %w", i, redactedLabel(s.Source), err)
		}
		label := fmt.Sprintf("spec.sources[%d] (%s)", i, redactedLabel(s.Source))
		for _, o := range loaded.Objects {
			id := objectID(o)
			if first, dup := seen[id]; dup {
				return nil, &render.SourceError{Path: label, Msg: fmt.Sprintf(
					"%s is rendered by %s too: an object comes from one source; remove it from one of them", id, first.label)}
			}
			seen[id] = owner{index: i, label: label}
			all = append(all, o)
		}
		out.CacheHit = out.CacheHit && loaded.CacheHit
		out.RemoteBases += loaded.RemoteBases
		out.Remote = append(out.Remote, loaded.Remote...)
		out.SourceTypes = append(out.SourceTypes, loaded.SourceType)
		if !slices.Contains(types, loaded.SourceType) {
			types = append(types, loaded.SourceType)
		}
	}
	_, digest, sorted, err := encode(all, strings.Join(types, "+"))
	if err != nil {
		return nil, fmt.Errorf("load manifests of app %q: %w", req.App, err)
	}
	out.Digest, out.Objects, out.Count, out.SourceType = digest, sorted, len(sorted), strings.Join(types, "+")
	return out, nil
}

// objectID names an object as the duplicate check and a user see it.
func objectID(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	id := gvk.Kind
	if gvk.Group != "" {
		id += "." + gvk.Group
	}
	if ns := o.GetNamespace(); ns != "" {
		return id + " " + ns + "/" + o.GetName()
	}
	return id + " " + o.GetName()
}

func redactedLabel(s app.Source) string {
	s.RepoURL = gitsource.RedactURL(s.RepoURL)
	return s.SourceLabel()
}

// refFiles checks out the refs req's value files name and reads those
// files (render.ReadRefFiles), for the render's Options.RefFiles.
func (l *Loader) refFiles(ctx context.Context, req Request) (map[string]string, func(), error) {
	if len(req.Refs) == 0 {
		return nil, func() {}, nil
	}
	var releases []func()
	releaseAll := func() {
		for _, r := range releases {
			r()
		}
	}
	roots := map[string]string{}
	for _, r := range req.Refs {
		dir, release, err := l.Repos.Checkout(ctx, r.RepoURL, r.SHA)
		if err != nil {
			releaseAll()
			return nil, nil, fmt.Errorf("check out ref %s (%s at %s): %w", r.Ref, gitsource.RedactURL(r.RepoURL), r.SHA, err)
		}
		releases = append(releases, release)
		roots[r.Ref] = dir
	}
	files, err := render.ReadRefFiles(req.Source, roots, render.Limits{}, render.BuildEnv(req.Source, req.renderOptions(nil)))
	if err != nil {
		releaseAll()
		return nil, nil, err
	}
	return files, releaseAll, nil
}

// normalizeRefs gives refs in a canonical order, URLs and SHAs normalised,
// for keys.
func normalizeRefs(refs []RefAt) []RefAt {
	if len(refs) == 0 {
		return nil
	}
	out := make([]RefAt, len(refs))
	for i, r := range refs {
		out[i] = RefAt{Ref: r.Ref, RepoURL: gitsource.NormalizeURL(r.RepoURL), SHA: strings.ToLower(strings.TrimSpace(r.SHA))}
	}
	slices.SortFunc(out, func(a, b RefAt) int { return cmp.Compare(a.Ref, b.Ref) })
	return out
}

func (req Request) helmKey(version string) string {
	rel := &helmRelease{Name: req.App, Namespace: req.Namespace}
	if h := req.Source.Helm; h != nil && h.ReleaseName != "" {
		rel.Name = h.ReleaseName
	}
	if h := req.Source.Helm; h != nil && h.Namespace != "" {
		rel.Namespace = h.Namespace
	}
	var env map[string]string
	if render.HelmNamesBuildEnv(req.Source.Helm) {
		env = render.BuildEnv(req.Source, req.renderOptions(nil))
	}
	return key(req.RepoURL, req.SHA, req.Source, version, rel, req.Refs, env, req.valueDigests)
}
