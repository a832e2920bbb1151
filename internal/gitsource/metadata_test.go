package gitsource

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRevisionMetadata: against a repository served over smart HTTP, a
// commit named by a full or short SHA, a branch or a tag answers its
// author, date, message and the tags at it; a revision that names nothing
// is not found, and the error names the revision, the repository and the
// branches it has.
func TestRevisionMetadata(t *testing.T) {
	ctx := context.Background()
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "meta")
	w := fx.work
	w.Git("checkout", "--quiet", "-b", "dated")
	w.Git("commit", "--quiet", "--allow-empty", "--date=2024-01-02T03:04:05+01:00", "-m", "Raise the replicas", "-m", "Two are not enough.")
	dated := w.Head()
	w.Git("tag", "-a", "release-1", "-m", "release 1")
	w.Git("tag", "also-this")
	w.Git("checkout", "--quiet", "main")
	w.Push()
	repos := newRepos(t, Options{})
	const author = "Ferry Test <test@ferry.invalid>"

	tests := []struct {
		name, revision string
		want           RevisionMetadata
	}{
		{"a full SHA", fx.a, RevisionMetadata{SHA: fx.a, Author: author, Tags: []string{"v1"}, Message: "first\n"}},
		{"a short SHA", fx.b[:8], RevisionMetadata{SHA: fx.b, Author: author, Tags: []string{"v2"}, Message: "second\n"}},
		{"a branch", "dated", RevisionMetadata{SHA: dated, Author: author, Tags: []string{"also-this", "release-1"},
			Message: "Raise the replicas\n\nTwo are not enough.\n"}},
		{"an annotated tag", "release-1", RevisionMetadata{SHA: dated, Author: author, Tags: []string{"also-this", "release-1"},
			Message: "Raise the replicas\n\nTwo are not enough.\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := repos.RevisionMetadata(ctx, fx.url, tt.revision)
			if err != nil {
				t.Fatalf("RevisionMetadata(%q): %v", tt.revision, err)
			}
			if got.Date.IsZero() || time.Since(got.Date) < 0 {
				t.Errorf("date %v: want the commit's", got.Date)
			}
			got.Date = time.Time{}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RevisionMetadata(%q) (-want +got):\n%s", tt.revision, diff)
			}
		})
	}

	t.Run("the author's date", func(t *testing.T) {
		got, err := repos.RevisionMetadata(ctx, fx.url, dated)
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2024, 1, 2, 2, 4, 5, 0, time.UTC); !got.Date.Equal(want) {
			t.Errorf("date %v, want %v", got.Date, want)
		}
	})

	for _, rev := range []string{"0123456789abcdef0123456789abcdef01234567", "0123456789ab", "no-such-branch"} {
		t.Run("unknown "+rev, func(t *testing.T) {
			_, err := repos.RevisionMetadata(ctx, fx.url, rev)
			if !IsNotFound(err) {
				t.Fatalf("RevisionMetadata(%q): %v, want not found", rev, err)
			}
			for _, want := range []string{rev, fx.url, "no such branch, tag or commit", "branches dated, dev, main"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not name %q: %v", want, err)
				}
			}
		})
	}
}
