package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
)

// checkRequested admits the revision a sync request named, resolved to
// sha: a branch, a tag or a commit in their history, or anything when the
// app's project carries app.AnnotationSyncAnyRevision.
func (c *Control) checkRequested(ctx context.Context, in contract.ResolveInput, sha string) error {
	req := in.Requested
	if c.Projects != nil {
		p, err := c.Projects.Project(ctx, req.Project)
		if nf := (*contract.ProjectNotFoundError)(nil); errors.As(err, &nf) {
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("app %q: %v", req.App, err), contract.ErrProjectNotFound, nil)
		}
		if err != nil {
			return fmt.Errorf("app %q: %w", req.App, err)
		}
		if p.AllowsAnySyncRevision() {
			return nil
		}
	}
	err := c.Repos.CheckBranchOrTag(ctx, in.RepoURL, in.TargetRevision, sha)
	if gitsource.IsRevisionRefused(err) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"app %q: sync refused: %v; a sync takes a branch, a tag or a commit in their history, "+
				"unless the app's project (%q) allows any revision with the annotation %s: \"true\"",
			req.App, err, req.Project, app.AnnotationSyncAnyRevision), contract.ErrInvalidSource, nil)
	}
	return classify(err)
}
