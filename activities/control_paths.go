package activities

import (
	"context"

	"go.temporal.io/sdk/activity"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
)

// unchanged reports whether the commits a render is asked for moved no
// file under the app's manifest-generate-paths since its last render
// (in.Unless), as Argo CD spares such renders since 2.9. Every doubt
// renders: a source without paths, a chart whose version moved, commits
// that cannot be compared.
func (c *Control) unchanged(ctx context.Context, in contract.RenderInput) bool {
	u := in.Unless
	if u == nil || c.Repos == nil {
		return false
	}
	srcs, revs := []app.Source{in.Source}, []string{in.SHA}
	if len(in.Sources) > 0 {
		srcs, revs = make([]app.Source, len(in.Sources)), make([]string, len(in.Sources))
		for i, s := range in.Sources {
			srcs[i], revs[i] = s.Source, s.Revision
		}
	}
	if len(u.Since) != len(srcs) || len(u.Paths) != len(srcs) {
		return false
	}
	for i, src := range srcs {
		switch {
		case u.Since[i] == revs[i]:
			continue
		case src.IsChartSource(), len(u.Paths[i]) == 0:
			return false
		}
		files, err := c.Repos.ChangedFiles(ctx, src.RepoURL, u.Since[i], revs[i])
		if err != nil {
			activity.GetLogger(ctx).Info("manifest-generate-paths: rendering, the commits could not be compared", "app", in.App, "err", err)
			return false
		}
		if len(files) > 0 && app.FilesTouch(u.Paths[i], files) {
			return false
		}
	}
	if c.Spared != nil {
		c.Spared()
	}
	return true
}
