package activities

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
)

// TestRevisionMetadata: a control worker reads a commit of a repository
// the app's project allows; one the project does not allow is refused
// before any fetch, and an unknown revision fails non-retryable, so that
// ferry-server answers 403 and 404.
func TestRevisionMetadata(t *testing.T) {
	s := gittest.NewServer(t)
	w := s.NewRepo(t, "shop")
	sha := w.Commit("Raise the replicas", map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})
	w.Git("tag", "v1")
	w.Push()
	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir()})
	require.NoError(t, err)
	project := func(sourceRepos ...string) *app.AppProject {
		p := &app.AppProject{Spec: app.ProjectSpec{SourceRepos: sourceRepos}}
		p.Metadata.Name = "team-a"
		return p
	}
	in := contract.RevisionMetadataInput{App: "shop", Project: "team-a", RepoURL: s.URL("shop"), Revision: sha[:7]}

	c := &Control{Repos: repos, Projects: fakeProjects{p: project(s.URL("*"))}}
	got, err := c.RevisionMetadata(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, contract.RevisionMetadataResult{SHA: sha, Author: "Ferry Test <test@ferry.invalid>", Date: got.Date, Tags: []string{"v1"},
		Message: "Raise the replicas\n"}, got)

	listings := s.Listings()
	c.Projects = fakeProjects{p: project("https://git.example.com/*")}
	_, err = c.RevisionMetadata(context.Background(), in)
	requireErrorType(t, err, contract.ErrProjectDenied, `project "team-a" does not allow source repository `+s.URL("shop"))
	assert.Equal(t, listings, s.Listings(), "nothing was asked of the repository")

	c.Projects = fakeProjects{p: project(s.URL("*"))}
	in.Revision = "no-such-branch"
	_, err = c.RevisionMetadata(context.Background(), in)
	requireErrorType(t, err, contract.ErrRevisionNotFound, `revision "no-such-branch": no such branch, tag or commit`)
}

func requireErrorType(t *testing.T, err error, typ, says string) {
	t.Helper()
	var ae *temporal.ApplicationError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, typ, ae.Type())
	assert.True(t, ae.NonRetryable(), "non-retryable")
	assert.Contains(t, ae.Message(), says)
}
