package gitsource

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// TestExportFailsOnAnUnreadableSubtree removes the object of a commit's
// subdirectory from a repository: the export fails and names it, instead of
// ending early with the files read so far (a sync would prune the rest).
func TestExportFailsOnAnUnreadableSubtree(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"a.yaml": "kind: A\n", "app/cm.yaml": "kind: ConfigMap\n", "z.yaml": "kind: Z\n"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddGlob("."); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0)}
	sha, err := wt.Commit("files", &git.CommitOptions{Author: sig})
	if err != nil {
		t.Fatal(err)
	}
	commit, err := repo.CommitObject(sha)
	if err != nil {
		t.Fatal(err)
	}
	root, err := commit.Tree()
	if err != nil {
		t.Fatal(err)
	}
	entry, err := root.FindEntry("app")
	if err != nil {
		t.Fatal(err)
	}
	h := entry.Hash.String()
	if err := os.Remove(filepath.Join(dir, ".git", "objects", h[:2], h[2:])); err != nil {
		t.Fatal(err)
	}
	// A fresh open: nothing of the subtree is left in go-git's object cache.
	repo, err = git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := &clone{dir: dir, repo: repo}
	opts := Options{MaxFileBytes: DefaultMaxFileBytes, MaxCheckoutBytes: DefaultMaxCheckoutBytes}
	err = c.export(context.Background(), sha, t.TempDir(), &opts)
	if err == nil {
		t.Fatal("the export of a commit whose app/ cannot be read succeeded")
	}
	if want := "read tree app: "; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to contain %q", err, want)
	}
}
