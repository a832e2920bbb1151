package manifests

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/render"
)

const otherSHA = "89abcdef0123456789abcdef0123456789abcdef"

func load(l *Loader, sha string, hard bool) error {
	_, err := l.LoadApp(context.Background(), Request{RepoURL: testRepo, SHA: sha, Source: appSource, App: "shop", Hard: hard})
	return err
}

// TestLoaderRemembersFailures: a source that failed for a reason in the
// commit is not checked out nor rendered again for the same commit and
// spec, until a hard load; another commit, spec or worker limits render.
func TestLoaderRemembersFailures(t *testing.T) {
	bomb := &render.LimitError{Path: "app", What: "memory", Limit: 256 << 20, Flag: "--render-memory"}
	cache := NewMemory(0, time.Hour)
	l, repos, r := newTestLoader(cache)
	l.FailureTag = "limits A"
	r.err = bomb

	first := load(l, testSHA, false)
	if !errors.As(first, new(*render.LimitError)) {
		t.Fatalf("first load: %v, want the render's LimitError", first)
	}
	second := load(l, testSHA, false)
	if !IsFailed(second) || second.Error() != first.Error() {
		t.Fatalf("second load: %v, want the remembered %q", second, first)
	}
	if n, c := r.calls.Load(), repos.checkouts.Load(); n != 1 || c != 1 {
		t.Fatalf("renders %d, checkouts %d after two loads; want 1 and 1", n, c)
	}

	// A second worker on the same cache with the same limits: no render.
	l2, _, r2 := newTestLoader(cache)
	l2.FailureTag = "limits A"
	if err := load(l2, testSHA, false); !IsFailed(err) || r2.calls.Load() != 0 {
		t.Errorf("another worker: %v after %d renders, want the remembered failure and none", err, r2.calls.Load())
	}

	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"hard", func() error { return load(l, testSHA, true) }},
		{"another commit", func() error { return load(l, otherSHA, false) }},
		{"another spec", func() error {
			src := appSource
			src.Directory = &app.DirectorySource{Recurse: false}
			_, err := l.LoadApp(context.Background(), Request{RepoURL: testRepo, SHA: testSHA, Source: src, App: "shop"})
			return err
		}},
	} {
		before := r.calls.Load()
		err := tc.do()
		if IsFailed(err) || r.calls.Load() != before+1 {
			t.Errorf("%s: %v after %d renders, want a fresh render", tc.name, err, r.calls.Load()-before)
		}
	}

	// A worker with other limits renders for itself.
	l3, _, r3 := newTestLoader(cache)
	l3.FailureTag = "limits B"
	r3.err = bomb
	if err := load(l3, testSHA, false); IsFailed(err) || r3.calls.Load() != 1 {
		t.Errorf("other limits: %v after %d renders, want a fresh render", err, r3.calls.Load())
	}

	// Fixed by a hard load: the set wins over the remembered failure.
	r.err = nil
	if err := load(l, testSHA, true); err != nil {
		t.Fatal(err)
	}
	if err := load(l, testSHA, false); err != nil {
		t.Errorf("after a hard load that rendered: %v", err)
	}
}

// TestLoaderForgetsTransientFailures: a failure that may pass (the Git
// server, the sandbox) renders again next time.
func TestLoaderForgetsTransientFailures(t *testing.T) {
	l, repos, r := newTestLoader(NewMemory(0, time.Hour))
	r.err = errors.New("render app in the gvisor sandbox: runsc: exit status 1")
	for i := 0; i < 2; i++ {
		if err := load(l, testSHA, false); err == nil || IsFailed(err) {
			t.Fatalf("load %d: %v", i, err)
		}
	}
	repos.err = errors.New("fetch: connection refused")
	r.err = nil
	_ = load(l, otherSHA, false)
	_ = load(l, otherSHA, false)
	if n, c := r.calls.Load(), repos.checkouts.Load(); n != 2 || c != 4 {
		t.Errorf("renders %d, checkouts %d; want every load to try again (2, 4)", n, c)
	}
}

// TestLoaderRemembersCheckoutLimits: a commit over the checkout limits
// is not fetched again.
func TestLoaderRemembersCheckoutLimits(t *testing.T) {
	l, repos, _ := newTestLoader(NewMemory(0, time.Hour))
	repos.err = &gitsource.LimitError{What: "file size", Size: 512 << 20, Limit: 64 << 20, Flag: "--checkout-max-file-size"}
	_ = load(l, testSHA, false)
	if err := load(l, testSHA, false); !IsFailed(err) || !strings.Contains(err.Error(), "--checkout-max-file-size") {
		t.Errorf("second load: %v", err)
	}
	if c := repos.checkouts.Load(); c != 1 {
		t.Errorf("checkouts = %d, want 1", c)
	}
}

// TestLoaderFailureEntriesSealed: in a cache others can write, failure
// entries are sealed and encrypted: no message in clear, and a planted
// entry is ignored.
func TestLoaderFailureEntriesSealed(t *testing.T) {
	srv := startRedis(t)
	cache := NewRedis(srv.addr, time.Hour)
	defer cache.Close()
	sealer, err := NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	l, _, r := newTestLoader(cache)
	l.Sealer = sealer
	r.err = &render.ParseError{File: "app/cm.yaml", Line: 3, Msg: "mapping values are not allowed in this context"}
	_ = load(l, testSHA, false)
	fkey := l.failureKey(Key(testRepo, testSHA, appSource, render.Version))
	raw, ok := cache.Get(context.Background(), fkey)
	if !ok {
		t.Fatal("no failure entry")
	}
	if strings.Contains(string(raw), "mapping values") || strings.Contains(string(raw), "app/cm.yaml") {
		t.Errorf("the failure entry holds the message in clear: %q", raw)
	}
	if err := load(l, testSHA, false); !IsFailed(err) || r.calls.Load() != 1 {
		t.Fatalf("second load: %v after %d renders", err, r.calls.Load())
	}

	// A planted entry (no seal) for another commit is not believed.
	cache.Put(context.Background(), l.failureKey(Key(testRepo, otherSHA, appSource, render.Version)),
		[]byte(`{"format":"ferry-render-failure/1","msg":"planted"}`))
	r.err = nil
	if err := load(l, otherSHA, false); err != nil {
		t.Errorf("a planted failure entry was believed: %v", err)
	}
}
