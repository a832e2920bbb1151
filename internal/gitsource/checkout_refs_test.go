package gitsource

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCheckoutOnlyThroughTheReposRefs: a server that hands out any object
// it holds by SHA (as a GitHub fork network does for a fork's commits
// through its parent's URL) does not make a commit that no branch, tag or
// ref of the repository reaches a revision of it. A commit that a ref
// outside branches and tags points at (a pull request's head) is fetched
// through that ref.
func TestCheckoutOnlyThroughTheReposRefs(t *testing.T) {
	ctx := context.Background()
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "upstream")
	w := fx.work
	runGit(t, w.Bare, "config", "uploadpack.allowAnySHA1InWant", "true")
	w.Git("checkout", "--quiet", "-b", "fork")
	forked := w.Commit("a fork's commit", map[string]string{"app/cm.yaml": "kind: ClusterRoleBinding\n"})
	w.Git("push", "--quiet", "origin", "fork")
	w.Git("push", "--quiet", "origin", ":fork") // its objects stay on the server, as in a fork network
	w.Git("checkout", "--quiet", "-b", "pr", "main")
	pr := w.Commit("a pull request", map[string]string{"app/cm.yaml": "kind: Service\n"})
	w.Git("push", "--quiet", "origin", "pr:refs/pull/1/head")
	w.Git("checkout", "--quiet", "main")

	// The server does serve the fork's commit by SHA: without the fix,
	// Checkout would find it.
	probe := t.TempDir()
	runGit(t, probe, "init", "--quiet")
	runGit(t, probe, "fetch", "--quiet", fx.url, forked)

	repos := newRepos(t, Options{})
	_, _, err := repos.Checkout(ctx, fx.url, forked)
	var notFound *CommitNotFoundError
	if !errors.As(err, &notFound) || !strings.Contains(err.Error(), "another repository") {
		t.Fatalf("Checkout of a commit no ref reaches: %v, want CommitNotFoundError", err)
	}

	sha, err := repos.Resolve(ctx, fx.url, "refs/pull/1/head")
	if err != nil || sha != pr {
		t.Fatalf("Resolve(refs/pull/1/head) = %s, %v; want %s", sha, err, pr)
	}
	dir, release, err := repos.Checkout(ctx, fx.url, pr)
	if err != nil {
		t.Fatalf("Checkout of the pull request's head: %v", err)
	}
	defer release()
	if got := readTree(t, dir, "app/cm.yaml"); got != "kind: Service\n" {
		t.Errorf("pull request head: app/cm.yaml = %q", got)
	}
}
