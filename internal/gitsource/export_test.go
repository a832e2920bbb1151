package gitsource

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/treearchive"

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

// TestExportKeepsTheTreesArchive exports a commit of directories, files
// (executable, empty, larger than a tar block) and a symlink: the archive
// kept beside the tree holds exactly the tree as written out, each entry
// after its directory; a tree with more entries than an archive may hold
// gets none, and is exported all the same.
func TestExportKeepsTheTreesArchive(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"app/cm.yaml": "kind: ConfigMap\n", "app/deep/x.yaml": strings.Repeat("# x\n", 300),
		"bin/run.sh": "#!/bin/sh\n", "empty": ""}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "bin/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("app/cm.yaml", filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
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
	c := &clone{dir: dir, repo: repo}
	opts := Options{MaxFileBytes: DefaultMaxFileBytes, MaxCheckoutBytes: DefaultMaxCheckoutBytes}
	dest := filepath.Join(t.TempDir(), "tree")
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.export(context.Background(), sha, dest, &opts); err != nil {
		t.Fatal(err)
	}

	// The tree as written out: name → type, permissions, content or link.
	onDisk := map[string]string{}
	err = filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dest {
			return err
		}
		rel, _ := filepath.Rel(dest, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			onDisk[filepath.ToSlash(rel)] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			onDisk[filepath.ToSlash(rel)] = "link " + link
			return err
		default:
			body, err := os.ReadFile(p)
			onDisk[filepath.ToSlash(rel)] = fmt.Sprintf("file %o %x", info.Mode().Perm(), sha256.Sum256(body))
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(treearchive.Path(dest))
	if err != nil {
		t.Fatalf("no archive beside the tree: %v", err)
	}
	defer f.Close()
	inArchive := map[string]string{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if parent := path.Dir(h.Name); parent != "." && inArchive[parent] != "dir" {
			t.Errorf("%s comes before its directory %s", h.Name, parent)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			inArchive[h.Name] = "dir"
		case tar.TypeSymlink:
			inArchive[h.Name] = "link " + h.Linkname
		case tar.TypeReg:
			body, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			inArchive[h.Name] = fmt.Sprintf("file %o %x", h.Mode, sha256.Sum256(body))
		default:
			t.Errorf("%s: type %c", h.Name, h.Typeflag)
		}
	}
	if !reflect.DeepEqual(inArchive, onDisk) {
		t.Errorf("the archive holds\n%v\nthe tree\n%v", inArchive, onDisk)
	}
	if len(onDisk) != 8 {
		t.Errorf("the tree has %d entries, want 8: %v", len(onDisk), onDisk)
	}

	max := treearchive.MaxFiles
	t.Cleanup(func() { treearchive.MaxFiles = max })
	treearchive.MaxFiles = len(onDisk) - 1
	large := filepath.Join(t.TempDir(), "tree")
	if err := os.Mkdir(large, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.export(context.Background(), sha, large, &opts); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(treearchive.Path(large)); !os.IsNotExist(err) {
		t.Errorf("a tree of more entries than an archive holds has one: %v", err)
	}
	if got := readTree(t, large, "empty"); got != "" {
		t.Errorf("empty: %q", got)
	}
	if got := readTree(t, large, "app/deep/x.yaml"); got != files["app/deep/x.yaml"] {
		t.Errorf("app/deep/x.yaml: %d bytes", len(got))
	}
}
