package gitsource

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/treearchive"
)

func readTree(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCheckoutTwoSHAs(t *testing.T) {
	linger := treeLinger
	treeLinger = 200 * time.Millisecond
	t.Cleanup(func() { treeLinger = linger })
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "two")
	repos := newRepos(t, Options{})
	ctx := context.Background()

	dirA, releaseA, err := repos.Checkout(ctx, fx.url, fx.a)
	if err != nil {
		t.Fatal(err)
	}
	dirB, releaseB, err := repos.Checkout(ctx, fx.url, fx.b)
	if err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, dirA, "app/cm.yaml"); got != "kind: ConfigMap\n" {
		t.Errorf("commit a: app/cm.yaml = %q", got)
	}
	if got := readTree(t, dirB, "app/cm.yaml"); got != "kind: Secret\n" {
		t.Errorf("commit b: app/cm.yaml = %q", got)
	}
	if n := repos.FetchCalls(fx.url); n != 1 {
		t.Errorf("FetchCalls = %d, want 1 (the first fetch brings both commits)", n)
	}
	if _, err := os.Stat(treearchive.Path(dirA)); err != nil {
		t.Errorf("commit a has no archive beside its tree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dirA, ".git")); !os.IsNotExist(err) {
		t.Errorf("the tree holds a .git: %v", err)
	}

	// A second holder of the same commit shares the directory; it stays
	// until the last release.
	dirA2, releaseA2, err := repos.Checkout(ctx, fx.url, fx.a)
	if err != nil {
		t.Fatal(err)
	}
	if dirA2 != dirA {
		t.Errorf("second checkout of a: %s, want shared %s", dirA2, dirA)
	}
	releaseA()
	releaseA() // idempotent
	if _, err := os.Stat(dirA); err != nil {
		t.Fatalf("tree removed while still held: %v", err)
	}
	releaseA2()
	releaseB()
	// A released tree stays a while for the next holder of its commit
	// (the next app of the repository), then goes.
	dirA3, releaseA3, err := repos.Checkout(ctx, fx.url, fx.a)
	if err != nil {
		t.Fatal(err)
	}
	if dirA3 != dirA {
		t.Errorf("checkout of a just after its release: %s, want the same tree %s", dirA3, dirA)
	}
	releaseA3()
	deadline := time.Now().Add(treeLinger + 10*time.Second)
	// Each tree goes with the archive kept beside it.
	for _, dir := range []string{dirA, dirB, treearchive.Path(dirA), treearchive.Path(dirB)} {
		for {
			_, err := os.Stat(dir)
			if os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tree %s still there %s after its release: %v", dir, treeLinger+10*time.Second, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if n := repos.FetchCalls(fx.url); n != 1 {
		t.Errorf("FetchCalls = %d after checking out known commits, want 1", n)
	}
}

func TestCheckoutConcurrent(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "concurrent")
	repos := newRepos(t, Options{})

	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		sha, want := fx.a, "kind: ConfigMap\n"
		if i%2 == 1 {
			sha, want = fx.b, "kind: Secret\n"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir, release, err := repos.Checkout(context.Background(), fx.url, sha)
			if err != nil {
				t.Error(err)
				return
			}
			defer release()
			if got := readTree(t, dir, "app/cm.yaml"); got != want {
				t.Errorf("%s: app/cm.yaml = %q, want %q", sha, got, want)
			}
		}()
	}
	wg.Wait()
}

// TestCheckoutWhileReleasing: a checkout of a commit that starts while the
// tree of its last holder is still being removed gets a whole tree of its
// own, which the removal does not touch.
func TestCheckoutWhileReleasing(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "churn")
	repos := newRepos(t, Options{})
	removing, removed := make(chan struct{}), make(chan struct{})
	var held atomic.Bool
	repos.removeTree = func(dir string) error {
		if held.CompareAndSwap(false, true) {
			close(removing)
			<-removed // the second checkout happens here
		}
		return os.RemoveAll(dir)
	}
	ctx := context.Background()

	first, release, err := repos.Checkout(ctx, fx.url, fx.a)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() { release(); close(released) }()
	<-removing
	second, release2, err := repos.Checkout(ctx, fx.url, fx.a)
	close(removed)
	<-released
	if err != nil {
		t.Fatalf("checkout while the last tree is being removed: %v", err)
	}
	defer release2()
	if second == first {
		t.Errorf("the new tree reuses the directory being removed: %s", second)
	}
	if got := readTree(t, second, "app/cm.yaml"); got != "kind: ConfigMap\n" {
		t.Errorf("app/cm.yaml = %q after the old tree's removal", got)
	}
}

func TestCheckoutFetchesNewCommits(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "later")
	repos := newRepos(t, Options{})
	ctx := context.Background()

	_, release, err := repos.Checkout(ctx, fx.url, fx.a)
	if err != nil {
		t.Fatal(err)
	}
	release()
	c := fx.work.Commit("third", map[string]string{"app/cm.yaml": "kind: Service\n"})
	fx.work.Push()
	dir, release, err := repos.Checkout(ctx, fx.url, c)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := readTree(t, dir, "app/cm.yaml"); got != "kind: Service\n" {
		t.Errorf("new commit: app/cm.yaml = %q", got)
	}
}

func TestCheckoutUnknownCommit(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "unknown")
	repos := newRepos(t, Options{})
	missing := strings.Repeat("ab", 20)
	_, _, err := repos.Checkout(context.Background(), fx.url, missing)
	var notFound *CommitNotFoundError
	if !errors.As(err, &notFound) || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), fx.url) {
		t.Fatalf("Checkout of a missing commit: %v", err)
	}
	// The clone was intact, so it was kept rather than cloned again.
	// No ref points at it: it is not asked for by its SHA alone
	// (TestCheckoutOnlyThroughTheReposRefs).
	if n := repos.FetchCalls(fx.url); n != 1 {
		t.Errorf("FetchCalls = %d, want 1 (branches and tags)", n)
	}
	if _, _, err := repos.Checkout(context.Background(), fx.url, "main"); err == nil {
		t.Fatal("Checkout of a branch name: no error")
	}
}

func TestCheckoutRecoversBrokenClone(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, cloneDir string)
	}{
		{"objects deleted", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "objects")); err != nil {
				t.Fatal(err)
			}
		}},
		{"packs emptied", func(t *testing.T, dir string) {
			packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*"))
			if len(packs) == 0 {
				t.Fatal("no pack files in the clone")
			}
			for _, p := range packs {
				if err := os.WriteFile(p, []byte("garbage"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"not a repository", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "junk"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"clone removed", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newGitServer(t)
			fx := newFixtureRepo(t, s, "broken")
			cacheDir := t.TempDir()
			ctx := context.Background()

			repos := newRepos(t, Options{CacheDir: cacheDir})
			_, release, err := repos.Checkout(ctx, fx.url, fx.a)
			if err != nil {
				t.Fatal(err)
			}
			release()
			tc.break_(t, filepath.Join(cacheDir, "clones", urlHash(fx.url)))

			// The same process, and a restarted one, both recover.
			for _, r := range []*Repos{repos, newRepos(t, Options{CacheDir: cacheDir})} {
				dir, release, err := r.Checkout(ctx, fx.url, fx.b)
				if err != nil {
					t.Fatalf("Checkout after the clone broke: %v", err)
				}
				if got := readTree(t, dir, "app/cm.yaml"); got != "kind: Secret\n" {
					t.Errorf("app/cm.yaml = %q", got)
				}
				release()
				tc.break_(t, filepath.Join(cacheDir, "clones", urlHash(fx.url)))
			}
		})
	}
}

func TestCheckoutEvictsLeastRecentlyUsed(t *testing.T) {
	s := newGitServer(t)
	one := newFixtureRepo(t, s, "one")
	two := newFixtureRepo(t, s, "two")
	three := newFixtureRepo(t, s, "three")
	cacheDir := t.TempDir()
	repos := newRepos(t, Options{CacheDir: cacheDir, MaxClones: 2})
	ctx := context.Background()

	checkout := func(fx fixtureRepo) {
		t.Helper()
		_, release, err := repos.Checkout(ctx, fx.url, fx.a)
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	exists := func(fx fixtureRepo) bool {
		_, err := os.Stat(filepath.Join(cacheDir, "clones", urlHash(fx.url)))
		return err == nil
	}
	checkout(one)
	checkout(two)
	checkout(one) // one is now more recently used than two
	checkout(three)
	if !exists(one) || exists(two) || !exists(three) {
		t.Fatalf("clones kept: one=%v two=%v three=%v, want one and three", exists(one), exists(two), exists(three))
	}
	entries, _ := os.ReadDir(filepath.Join(cacheDir, "clones"))
	for _, e := range entries {
		if len(e.Name()) != 64 {
			t.Errorf("clone directory %q is not named by a hash", e.Name())
		}
	}
}

func TestCheckoutFileModes(t *testing.T) {
	s := newGitServer(t)
	w := s.NewRepo(t, "modes")
	w.Commit("files", map[string]string{"bin/run.sh": "#!/bin/sh\n", "app/a.yaml": "a: 1\n"})
	if err := os.Symlink("../app/a.yaml", filepath.Join(w.Dir, "bin", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(w.Dir, "bin", "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	sha := w.Commit("modes", nil)
	w.Push()

	repos := newRepos(t, Options{})
	dir, release, err := repos.Checkout(context.Background(), s.URL("modes"), sha)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	info, err := os.Stat(filepath.Join(dir, "bin", "run.sh"))
	if err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Errorf("bin/run.sh not executable: %v %v", info.Mode(), err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "bin", "link.yaml")); err != nil || target != "../app/a.yaml" {
		t.Errorf("bin/link.yaml: link to %q, %v", target, err)
	}
}

func TestCheckTreePath(t *testing.T) {
	for _, bad := range []string{"", "/etc/passwd", "../x", "a/../../x", "a/.git/config", ".GIT/hooks", "a//b", "a\\b"} {
		if checkTreePath(bad) == nil {
			t.Errorf("checkTreePath(%q) accepted", bad)
		}
	}
	for _, good := range []string{"a", "a/b.yaml", ".github/workflows/ci.yaml", "..a/b"} {
		if err := checkTreePath(good); err != nil {
			t.Errorf("checkTreePath(%q): %v", good, err)
		}
	}
}
