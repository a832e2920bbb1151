package app

import (
	"encoding/json"
	"slices"
	"strings"
)

// MarshalJSON leaves spec.source out of a multi-source spec, where it is
// empty (Parse would refuse both fields set); a spec of one source encodes
// as it always has, so that its SpecDigest stays.
func (s Spec) MarshalJSON() ([]byte, error) {
	type plain Spec
	if len(s.Sources) == 0 {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		Source *Source `json:"source,omitempty"`
	}{plain: plain(s)})
}

// IsMultiSource reports whether the app has spec.sources.
func (a *Application) IsMultiSource() bool { return len(a.Spec.Sources) > 0 }

// SourceList is every source of the app: spec.sources, or spec.source alone.
func (a *Application) SourceList() []Source {
	if a.IsMultiSource() {
		return a.Spec.Sources
	}
	return []Source{a.Spec.Source}
}

// PrimaryRepoURL is the repository the app is listed by (FerryRepoURL):
// spec.source's, or the first Git repository of spec.sources (a push to a
// Helm repository sends no webhook), else its first.
func (a *Application) PrimaryRepoURL() string {
	if !a.IsMultiSource() {
		return a.Spec.Source.RepoURL
	}
	for _, s := range a.Spec.Sources {
		if !s.IsChartSource() {
			return s.RepoURL
		}
	}
	return a.Spec.Sources[0].RepoURL
}

// GitRepoURLs are the Git repositories of every source, as written, each
// once, in the order of the sources (FerryRepoURLs, what the webhook finds
// the app by): a push to any of them may move the app. Chart sources
// (Helm and OCI repositories) send no pushes and are left out.
func (a *Application) GitRepoURLs() []string {
	var out []string
	for _, s := range a.SourceList() {
		if !s.IsChartSource() && s.RepoURL != "" && !slices.Contains(out, s.RepoURL) {
			out = append(out, s.RepoURL)
		}
	}
	return out
}

// RendersNothing reports whether the source only offers its files to the
// other sources (ref set, no path), as in Argo CD.
func (s Source) RendersNothing() bool {
	return s.Ref != "" && s.Chart == "" && strings.TrimSpace(s.Path) == ""
}

// RefValueFile splits a Helm value file naming another source's file,
// $ref/path, into the ref and the path from that source's repository root.
// A path starting with a variable of Argo CD's build environment
// ($ARGOCD_APP_NAME/…, ${…}, $$ for a literal $) is a path of the source's
// own repository: Argo CD reads a ref only when the first segment names a
// source's ref, and no ref is named so.
func RefValueFile(vf string) (ref, path string, ok bool) {
	if !strings.HasPrefix(vf, "$") || strings.HasPrefix(vf, "$ARGOCD_") || strings.HasPrefix(vf, "${") || strings.HasPrefix(vf, "$$") {
		return "", "", false
	}
	ref, path, _ = strings.Cut(vf[1:], "/")
	return ref, path, true
}

// RefsOf are the refs of the sources src's Helm value files name, in the
// order they first appear.
func RefsOf(src Source) []string {
	if src.Helm == nil {
		return nil
	}
	var refs []string
	seen := map[string]bool{}
	for _, vf := range src.Helm.ValueFiles {
		if ref, _, ok := RefValueFile(vf); ok && !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	return refs
}

// SourceLabel names a source in messages and listings: its name, else its
// chart or path in its repository.
func (s Source) SourceLabel() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Chart != "":
		return s.RepoURL + " chart " + s.Chart
	case s.RendersNothing():
		return s.RepoURL + " (ref " + s.Ref + ")"
	}
	p := s.Path
	if p == "" {
		p = "."
	}
	return s.RepoURL + " path " + p
}
