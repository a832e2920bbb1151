package gitsource

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCheckoutRefusesAHugeFile: a commit with a 512 MiB file of zeros (a
// few MB on the server) fails as a LimitError naming the limit and its
// flag, from the pack's object headers: the worker never inflates it.
func TestCheckoutRefusesAHugeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("commits 512 MiB")
	}
	s := newGitServer(t)
	w := s.NewRepo(t, "zeros")
	f, err := os.Create(filepath.Join(w.Dir, "zeros.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(512 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	sha := w.Commit("zeros", map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})
	w.Push()
	repos := newRepos(t, Options{FileFlag: "--checkout-max-file-size"})

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err = repos.Checkout(context.Background(), s.URL("zeros"), sha)
	runtime.ReadMemStats(&after)
	var limit *LimitError
	if !errors.As(err, &limit) || !IsLimit(err) || limit.What != "file size" || limit.Size != 512<<20 {
		t.Fatalf("err = %v, want a file size LimitError for 512 MiB", err)
	}
	for _, want := range []string{"a file of 512 MiB, larger than the 64 MiB", "raise it with --checkout-max-file-size"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the checkout allocated %d MiB: the file was inflated", alloc>>20)
	}
	if n := repos.FetchCalls(s.URL("zeros")); n != 1 {
		t.Errorf("FetchCalls = %d, want 1: a limit is not a broken clone to fetch again", n)
	}
	tmp, _ := filepath.Glob(filepath.Join(repos.clonesAt, "*", "objects", "pack", "tmp_pack_*"))
	if len(tmp) > 0 {
		t.Errorf("the refused pack is left behind: %v", tmp)
	}
}

// TestCheckoutLimitsOfTheTree: a clone that already holds the commit (an
// earlier worker with larger limits fetched it) is checked file by file,
// from the object headers, as it is written out.
func TestCheckoutLimitsOfTheTree(t *testing.T) {
	s := newGitServer(t)
	w := s.NewRepo(t, "tree")
	mib := strings.Repeat("x", 1<<20)
	sha := w.Commit("two files", map[string]string{"a.bin": mib, "b.bin": mib + "y", "app/cm.yaml": "kind: ConfigMap\n"})
	w.Push()
	cache := t.TempDir()
	dir, release, err := newRepos(t, Options{CacheDir: cache}).Checkout(context.Background(), s.URL("tree"), sha)
	if err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, dir, "b.bin"); len(got) != 1<<20+1 {
		t.Errorf("b.bin has %d bytes", len(got))
	}
	release()

	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"file", Options{MaxFileBytes: 1 << 20, FileFlag: "--checkout-max-file-size"},
			"file b.bin is 1 MiB, larger than the 1 MiB the worker checks out for one file; remove it (or keep it in Git LFS), or raise it with --checkout-max-file-size"},
		{"checkout", Options{MaxCheckoutBytes: 3 << 19, CheckoutFlag: "--checkout-max-size"},
			"the commit's files add up to more than 1 MiB, the most the worker checks out; split the repository, or raise it with --checkout-max-size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.CacheDir = cache
			repos := newRepos(t, tc.opts)
			_, _, err := repos.Checkout(context.Background(), s.URL("tree"), sha)
			if !IsLimit(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a LimitError saying %q", err, tc.want)
			}
			if n := repos.FetchCalls(s.URL("tree")); n != 0 {
				t.Errorf("FetchCalls = %d, want 0: the clone holds the commit", n)
			}
		})
	}
}

// A delta's header gives the size of the object it makes.
func TestDeltaResultSize(t *testing.T) {
	d := &deltaHead{}
	// base 300 (0xac 0x02), result 1<<29 (0x80 0x80 0x80 0x80 0x02)
	_, _ = d.Write([]byte{0xac, 0x02, 0x80, 0x80})
	_, _ = d.Write([]byte{0x80, 0x80, 0x02, 0x91, 0x00})
	if size, ok := d.resultSize(); !ok || size != 1<<29 {
		t.Errorf("resultSize = %d, %v; want %d", size, ok, 1<<29)
	}
	if _, ok := (&deltaHead{}).resultSize(); ok {
		t.Error("an empty delta has no size")
	}
}

// TestCheckoutBesideAnOversizedBranch: a file too large on one branch
// does not stop checkouts of another branch's commits; the commit holding
// it still fails.
func TestCheckoutBesideAnOversizedBranch(t *testing.T) {
	s := newGitServer(t)
	w := s.NewRepo(t, "branches")
	small := w.Commit("small", map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})
	w.Git("checkout", "--quiet", "-b", "big")
	big := w.Commit("big", map[string]string{"big.bin": strings.Repeat("x", 2<<20)})
	w.Git("checkout", "--quiet", "main")
	w.Push()
	repos := newRepos(t, Options{MaxFileBytes: 1 << 20})

	dir, release, err := repos.Checkout(context.Background(), s.URL("branches"), small)
	if err != nil {
		t.Fatalf("checkout of main beside an oversized branch: %v", err)
	}
	if got := readTree(t, dir, "app/cm.yaml"); got != "kind: ConfigMap\n" {
		t.Errorf("app/cm.yaml = %q", got)
	}
	release()
	if _, _, err := repos.Checkout(context.Background(), s.URL("branches"), big); !IsLimit(err) {
		t.Errorf("checkout of the oversized commit: %v, want a LimitError", err)
	}
}
