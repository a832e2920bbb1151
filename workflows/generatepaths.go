package workflows

import (
	"strings"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// pathsCheck asks a render of srcs to spare itself when the new commits
// moved no file under the app's manifest-generate-paths since the last
// render (contract.RenderInput.Unless): for polls, refreshes and
// multi-source apps alike, where a webhook push that lists its files
// (onRefresh) is not there to tell. Nil when the app has no such
// annotation, or the last render cannot stand for another commit: none
// yet, another spec, remote Kustomize bases, or a hard refresh.
func (s *appState) pathsCheck(srcs []app.Source, hard bool, specDigest string) *contract.PathsCheck {
	r := s.Rendered
	if r == nil || hard || r.SpecDigest != specDigest || r.RemoteBases > 0 {
		return nil
	}
	if strings.TrimSpace(s.app.Metadata.Annotations[app.AnnotationManifestGeneratePaths]) == "" {
		return nil
	}
	since := strings.Split(r.commit(), revisionSep)
	if len(since) != len(srcs) {
		return nil
	}
	paths := make([][]string, len(srcs))
	for i := range srcs {
		paths[i] = s.app.GeneratePaths(&srcs[i])
	}
	return &contract.PathsCheck{Since: since, Paths: paths}
}

// spared takes a render that pathsCheck spared: the last render stands
// for commit (one per source, joined, for a multi-source app), as for a
// webhook push that touched none of the paths.
func (s *appState) spared(out contract.RenderResult, commit string) (contract.Target, bool) {
	r := s.Rendered
	if !out.Unchanged || r == nil {
		return contract.Target{}, false
	}
	r.Revision = commit
	if r.Revision == r.SHA {
		r.Revision = ""
	}
	return s.targetOf(r), true
}
