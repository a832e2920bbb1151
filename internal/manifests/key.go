package manifests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/render"
)

// keyFormat is bumped when the key's encoding or the entries under it
// change, so that older entries are never read: 2 since entries are sealed
// (Sealer).
const keyFormat = 2

// keyInput is everything a render depends on. Its JSON encoding is
// canonical: struct fields keep their order and maps are sorted by key.
type keyInput struct {
	Format int    `json:"format"`
	Repo   string `json:"repo"`
	SHA    string `json:"sha"`
	Path   string `json:"path"`
	// Chart is left out when empty, so that keys of Git sources stay what
	// they were; SHA is then the chart's version.
	Chart     string               `json:"chart,omitempty"`
	Directory *app.DirectorySource `json:"directory"`
	Kustomize *app.KustomizeSource `json:"kustomize"`
	Helm      *app.HelmSource      `json:"helm"`
	// Plugin is left out when nil, so that keys of other sources stay
	// what they were.
	Plugin *app.PluginSource `json:"plugin,omitempty"`
	// TargetRevision is set only for plugin sources, whose environment
	// names it (ARGOCD_APP_SOURCE_TARGET_REVISION).
	TargetRevision string `json:"targetRevision,omitempty"`
	Renderer       string `json:"renderer"`
	// Release is set only in keys of Helm renders (HelmKey).
	Release *helmRelease `json:"release,omitempty"`
	// Refs are the commits of the other sources whose files the source's
	// Helm value files name ($ref/path); left out when there are none, so
	// that other keys stay what they were.
	Refs []RefAt `json:"refs,omitempty"`
	// BuildEnv is the build environment of a Helm render whose
	// parameters or value file paths name it (render.HelmNamesBuildEnv):
	// the app, its namespace and its source as written; left out
	// otherwise, so that other keys stay what they were.
	BuildEnv map[string]string `json:"buildEnv,omitempty"`
	// ValueFiles are the SHA-256 digests of the Helm value files given as
	// URLs, fetched for the load (valuefiles.go), by valueFiles entry;
	// left out when there are none, so that other keys stay what they
	// were.
	ValueFiles map[string]string `json:"valueFiles,omitempty"`
}

// helmRelease is what a Helm render takes from the Application rather
// than from spec.source.helm.
type helmRelease struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// Key names the rendered manifests of src at commit sha of repoURL, as
// produced by renderer version rendererVersion: the hex SHA-256 of a
// canonical encoding of the normalised repository URL, the SHA, the cleaned
// path, the directory, kustomize and helm options and the renderer version.
// src.RepoURL and src.TargetRevision are not used: repoURL and sha stand for
// them. A nil option section and an empty one differ, because an explicit
// section chooses the source type.
//
// The Application's name and namespace are not part of it: every
// Application on the same path and options shares the set. A Helm render
// depends on them, and is kept under HelmKey.
func Key(repoURL, sha string, src app.Source, rendererVersion string) string {
	return key(repoURL, sha, src, rendererVersion, nil, nil, nil, nil)
}

// HelmKey is Key for a Helm render: it adds the release name and namespace
// the chart is rendered with (spec.source.helm's, else the Application's
// name and destination namespace), so that Applications rendering a chart
// the same way share the set and the others do not.
func HelmKey(repoURL, sha string, src app.Source, rendererVersion string, opts render.Options) string {
	return Request{RepoURL: repoURL, SHA: sha, Source: src, App: opts.AppName, Namespace: opts.Namespace}.helmKey(rendererVersion)
}

func key(repoURL, sha string, src app.Source, rendererVersion string, rel *helmRelease, refs []RefAt, env, valueFiles map[string]string) string {
	in := keyInput{
		Format:     keyFormat,
		Repo:       gitsource.NormalizeURL(repoURL),
		SHA:        strings.ToLower(strings.TrimSpace(sha)),
		Path:       cleanPath(src.Path),
		Chart:      src.Chart,
		Directory:  src.Directory,
		Kustomize:  src.Kustomize,
		Helm:       src.Helm,
		Plugin:     src.Plugin,
		Renderer:   rendererVersion,
		Release:    rel,
		Refs:       normalizeRefs(refs),
		BuildEnv:   env,
		ValueFiles: valueFiles,
	}
	if src.Plugin != nil {
		in.TargetRevision = src.TargetRevision
	}
	b, err := json.Marshal(in)
	if err != nil {
		// Only Helm's ValuesObject can fail (a value JSON cannot hold);
		// such a source can never render, so any distinct key will do.
		b = []byte(err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func cleanPath(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return "."
	}
	return path.Clean(p)
}
