package e2e

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/contract"
	"github.com/ferry-gitops/ferry/ferryclient"
)

// TestProjectCacheFollowsTheProject: the workers' cache of projects
// answers again with what it read while the project's workflow has not
// moved, and the new rules at once after an apply; a deleted project is
// gone at once, and the built-in default stands in for an unapplied one.
func TestProjectCacheFollowsTheProject(t *testing.T) {
	startWorkerWith(t, "--control")
	ctx := context.Background()
	cache := &ferryclient.ProjectCache{Client: temporalClient(t)}
	const repoA, repoB = "https://git.example.com/a.git", "https://git.example.com/b.git"
	mustFerry(t, "project", "apply", "-f", writeFile(t, cachedProject(repoA)))
	t.Cleanup(func() { _, _ = ferry(t, "project", "delete", "cached") })

	first, err := cache.Get(ctx, "cached")
	require.NoError(t, err)
	require.Equal(t, []string{repoA}, first.Spec.SourceRepos)
	again, err := cache.Get(ctx, "cached")
	require.NoError(t, err)
	require.Same(t, first, again, "an unmoved project is answered from the cache")

	mustFerry(t, "project", "apply", "-f", writeFile(t, cachedProject(repoB)))
	after, err := cache.Get(ctx, "cached")
	require.NoError(t, err)
	require.Equal(t, []string{repoB}, after.Spec.SourceRepos, "an applied project's new rules are read at once")

	mustFerry(t, "project", "delete", "cached")
	_, err = cache.Get(ctx, "cached")
	var nf *contract.ProjectNotFoundError
	require.True(t, errors.As(err, &nf), "a deleted project is gone at once: %v", err)

	def, err := cache.Get(ctx, "")
	require.NoError(t, err)
	require.True(t, def.IsBuiltIn(), "no default project applied: the built-in one")
}

func cachedProject(repo string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: cached}
spec:
  sourceRepos: [` + repo + `]
  destinations: [{name: us-east-1, namespace: cached}]
`
}
