package gitsource

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCheckBranchOrTag: against a repository served over smart HTTP, a
// sync may name a branch, a tag, or a commit in their history; not a pull
// request's ref, nor its commit, even once a checkout brought that commit
// into the clone.
func TestCheckBranchOrTag(t *testing.T) {
	ctx := context.Background()
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "shop")
	w := fx.work
	older := w.Commit("older", map[string]string{"app/cm.yaml": "kind: ConfigMap\nv: 2\n"})
	tip := w.Commit("tip", map[string]string{"app/cm.yaml": "kind: ConfigMap\nv: 3\n"})
	w.Git("push", "--quiet", "origin", "main")
	w.Git("checkout", "--quiet", "-b", "pr", "main")
	pr := w.Commit("a pull request", map[string]string{"app/cm.yaml": "kind: ClusterRoleBinding\n"})
	w.Git("push", "--quiet", "origin", "pr:refs/pull/1/head")
	w.Git("checkout", "--quiet", "main")
	repos := newRepos(t, Options{})

	// The pull request's commit in the clone, as a checkout of it leaves it.
	if _, release, err := repos.Checkout(ctx, fx.url, pr); err != nil {
		t.Fatalf("checkout of the pull request: %v", err)
	} else {
		release()
	}

	tests := []struct {
		name, rev string
		refused   string // "" when admitted
	}{
		{"HEAD", "HEAD", ""},
		{"the default", "", ""},
		{"a branch", "dev", ""},
		{"a branch's full ref", "refs/heads/main", ""},
		{"a tag", "v1", ""},
		{"an annotated tag's full ref", "refs/tags/v2", ""},
		{"a branch's tip", tip, ""},
		{"a commit in a branch's history", older, ""},
		{"a commit in a branch's history, short", older[:9], ""},
		{"a tag's commit", fx.b, ""},
		{"a pull request's ref", "refs/pull/1/head", "the ref is outside refs/heads and refs/tags"},
		{"a pull request's commit", pr, "commit " + pr + " is not in the history of any branch or tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sha, err := repos.Resolve(ctx, fx.url, tt.rev)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.rev, err)
			}
			err = repos.CheckBranchOrTag(ctx, fx.url, tt.rev, sha)
			switch {
			case tt.refused == "" && err != nil:
				t.Fatalf("%q refused: %v", tt.rev, err)
			case tt.refused != "" && (!IsRevisionRefused(err) || !strings.Contains(err.Error(), tt.refused)):
				t.Fatalf("%q: got %v, want a refusal saying %q", tt.rev, err, tt.refused)
			case tt.refused != "" && !strings.Contains(err.Error(), tt.rev):
				t.Fatalf("the refusal does not name the revision %q: %v", tt.rev, err)
			}
		})
	}
}

// TestCheckBranchOrTagAfterAPush: a commit pushed after the shared listing
// of refs was taken (a user pushes, then syncs to the commit at once) is
// admitted, as is a branch pushed since: a refusal asks the server again.
func TestCheckBranchOrTagAfterAPush(t *testing.T) {
	ctx := context.Background()
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "shop")
	repos := newRepos(t, Options{RefsTTL: time.Hour})
	if err := repos.CheckBranchOrTag(ctx, fx.url, "main", fx.b); err != nil {
		t.Fatalf("main: %v", err)
	}
	w := fx.work
	pushed := w.Commit("pushed", map[string]string{"app/cm.yaml": "kind: ConfigMap\nv: 4\n"})
	w.Git("push", "--quiet", "origin", "main")
	w.Git("push", "--quiet", "origin", "main:refs/heads/hotfix")
	if err := repos.CheckBranchOrTag(ctx, fx.url, pushed, pushed); err != nil {
		t.Fatalf("a commit pushed since the listing: %v", err)
	}
	if err := repos.CheckBranchOrTag(ctx, fx.url, "hotfix", pushed); err != nil {
		t.Fatalf("a branch pushed since the listing: %v", err)
	}
	err := repos.CheckBranchOrTag(ctx, fx.url, "no-such-branch", pushed)
	if !IsRevisionRefused(err) || !strings.Contains(err.Error(), "no branch or tag has that name") {
		t.Fatalf("got %v, want the refusal of a name no branch or tag has", err)
	}
}
