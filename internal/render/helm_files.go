package render

import (
	"fmt"

	"helm.sh/helm/v3/pkg/strvals"

	"github.com/ferry-gitops/ferry/internal/app"
)

// helmFileParameters sets spec.source.helm.fileParameters into vals, as
// helm template --set-file does (Argo CD passes them last): each value is
// the content of a file of the repository, relative to the chart, read
// under the render's budget. Its path may name the build environment.
func helmFileParameters(t *target, h *app.HelmSource, b *budget, vals map[string]any, env map[string]string) error {
	for i, fp := range h.FileParameters {
		what := fmt.Sprintf("spec.source.helm.fileParameters[%d].path", i)
		real, display, err := resolveInRepo(t.root, t.dir, Envsubst(fp.Path, env), what)
		if err != nil {
			return err
		}
		data, err := b.readFile(real, display)
		if err != nil {
			return err
		}
		read := func([]rune) (any, error) { return string(data), nil }
		if err := strvals.ParseIntoFile(fp.Name+"="+fp.Path, vals, read); err != nil {
			return &SourceError{Path: t.appPath, Msg: fmt.Sprintf("spec.source.helm.fileParameters[%d] %q: %v", i, fp.Name, err)}
		}
	}
	return nil
}
