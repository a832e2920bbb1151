package gitsource

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChangedFiles: between two commits of a repository served over smart
// HTTP, the files added, modified and removed, by their paths from the
// root; a commit compared with itself changes none; a commit the
// repository does not have is an error naming it.
func TestChangedFiles(t *testing.T) {
	ctx := context.Background()
	s := newGitServer(t)
	w := s.NewRepo(t, "mono")
	first := w.Commit("first", map[string]string{
		"apps/a/cm.yaml": "a: 1\n", "apps/b/cm.yaml": "b: 1\n", "apps/b/old.yaml": "old\n", "README.md": "hi\n"})
	second := w.Commit("second", map[string]string{
		"apps/a/cm.yaml": "a: 2\n", "apps/b/old.yaml": "", "apps/c/new.yaml": "c: 1\n"})
	w.Push()
	repos := newRepos(t, Options{})

	got, err := repos.ChangedFiles(ctx, s.URL("mono"), first, second)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"apps/a/cm.yaml", "apps/b/old.yaml", "apps/c/new.yaml"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ChangedFiles (-want +got):\n%s", diff)
	}
	if got, err := repos.ChangedFiles(ctx, s.URL("mono"), second, second); err != nil || len(got) != 0 {
		t.Errorf("a commit against itself: %v, %v; want none", got, err)
	}
	const missing = "0123456789abcdef0123456789abcdef01234567"
	if _, err := repos.ChangedFiles(ctx, s.URL("mono"), missing, second); err == nil || !IsNotFound(err) {
		t.Errorf("a commit the repository lacks: %v; want not found", err)
	}
}
