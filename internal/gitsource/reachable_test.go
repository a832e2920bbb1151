package gitsource

import (
	"context"
	"strings"
	"testing"
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
