package appset

import (
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
)

// ProjectAnnotation names, on an ApplicationSet, the project it runs under:
// the apps it generates must be of that project or of one the project lets
// its apps create children in (app.ChildProjectsAnnotation). Whoever applies
// the set chooses it, never its generators: a templatePatch or a Git file
// that rewrites spec.project cannot leave it.
const ProjectAnnotation = "ferry.dev/project"

// Project is the project the set runs under: its ProjectAnnotation, else its
// template's spec.project when that is written out (no "{{"), else Ferry's
// built-in default project, which allows children in every project, as an
// ApplicationSet of Argo CD may create apps in any.
func (s *ApplicationSet) Project() string {
	if p := strings.TrimSpace(s.Metadata.Annotations[ProjectAnnotation]); p != "" {
		return p
	}
	if p, ok := s.Spec.Template.Spec["project"].(string); ok && !strings.Contains(p, "{{") {
		if p = strings.TrimSpace(p); p != "" {
			return p
		}
	}
	return app.DefaultProject
}
