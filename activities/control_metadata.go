package activities

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
)

// RevisionMetadata answers what a commit of the app's repository says of
// itself, for ferry-server: the repository must be one the app's project
// allows (sourceRepos), as for a render; the commit comes from the
// worker's clone, with the credentials a render of it would use.
func (c *Control) RevisionMetadata(ctx context.Context, in contract.RevisionMetadataInput) (contract.RevisionMetadataResult, error) {
	if err := c.checkRepo(ctx, in); err != nil {
		return contract.RevisionMetadataResult{}, err
	}
	md, err := c.Repos.RevisionMetadata(ctx, in.RepoURL, in.Revision)
	if gitsource.IsNotFound(err) {
		return contract.RevisionMetadataResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("app %q: %v", in.App, err),
			contract.ErrRevisionNotFound, nil)
	}
	if err != nil {
		return contract.RevisionMetadataResult{}, classify(err)
	}
	return contract.RevisionMetadataResult{SHA: md.SHA, Author: md.Author, Date: md.Date, Tags: md.Tags, Message: md.Message}, nil
}

// checkRepo refuses a repository the app's project does not allow.
func (c *Control) checkRepo(ctx context.Context, in contract.RevisionMetadataInput) error {
	if c.Projects == nil {
		return nil
	}
	project := cmp.Or(in.Project, app.DefaultProject)
	p, err := c.Projects.Project(ctx, project)
	if nf := (*contract.ProjectNotFoundError)(nil); errors.As(err, &nf) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("app %q: %v", in.App, err), contract.ErrProjectNotFound, nil)
	}
	if err != nil {
		return fmt.Errorf("app %q: %w", in.App, err)
	}
	if !p.IsBuiltIn() && !p.PermitsRepo(in.RepoURL) {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"app %q: project %q does not allow source repository %s (sourceRepos): its commits are not read for the app",
			in.App, project, gitsource.RedactURL(in.RepoURL)), contract.ErrProjectDenied, nil)
	}
	return nil
}
