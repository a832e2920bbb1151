package workflows

import (
	"slices"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// pushMovesApp reports whether a push moved a revision the app tracks:
// spec.source's, or, for a multi-source app, that of any Git source of the
// repository the push was to (p.Repos: a ref source's too, whose files the
// others' value files name). A push that names no repository (from a
// worker older than Push.Repos, and in recorded histories) is read as
// before: a push to spec.source's repository.
func pushMovesApp(a *app.Application, p *contract.Push) bool {
	if !a.IsMultiSource() || len(p.Repos) == 0 {
		return pushMoves(&a.Spec.Source, p)
	}
	for i := range a.Spec.Sources {
		src := &a.Spec.Sources[i]
		if !src.IsChartSource() && slices.Contains(p.Repos, src.RepoURL) && pushMoves(src, p) {
			return true
		}
	}
	return false
}

// pushMoves reports whether a push moved the revision src tracks.
func pushMoves(src *app.Source, p *contract.Push) bool {
	rev := src.Revision()
	switch {
	case rev == app.DefaultTargetRevision:
		return p.DefaultBranch
	case p.Ref == rev, p.Ref == "refs/heads/"+rev, p.Ref == "refs/tags/"+rev:
		return true
	}
	return false
}

// pushTouchesManifests reports whether a push changed a file under the
// app's manifest-generate-paths; without the annotation, or without the
// list of changed files, every push may have.
func pushTouchesManifests(a *app.Application, p *contract.Push) bool {
	return app.FilesTouch(a.GeneratePaths(&a.Spec.Source), p.Paths)
}
