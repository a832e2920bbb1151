package workflows

import (
	"path"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// pushMoves reports whether a push moved the revision the app tracks.
func pushMoves(a *app.Application, p *Push) bool {
	rev := a.Spec.Source.Revision()
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
func pushTouchesManifests(a *app.Application, p *Push) bool {
	value := strings.TrimSpace(a.Metadata.Annotations[app.AnnotationManifestGeneratePaths])
	if value == "" || len(p.Paths) == 0 {
		return true
	}
	for _, raw := range strings.Split(value, ";") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		dir := path.Clean(strings.TrimPrefix(raw, "/"))
		if !strings.HasPrefix(raw, "/") {
			dir = path.Clean(path.Join(a.Spec.Source.Path, raw))
		}
		for _, changed := range p.Paths {
			changed = path.Clean(strings.TrimPrefix(changed, "/"))
			if dir == "." || changed == dir || strings.HasPrefix(changed, dir+"/") {
				return true
			}
		}
	}
	return false
}
