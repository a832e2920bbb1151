package manifests

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/render"
)

const (
	testRepo = "https://git.example.com/shop/config.git"
	testSHA  = "0123456789abcdef0123456789abcdef01234567"
)

// fakeRepos checks every commit out as testdata/repo, counting checkouts
// and releases.
type fakeRepos struct {
	checkouts, releases atomic.Int64
	err                 error
}

func (f *fakeRepos) Checkout(_ context.Context, _, _ string) (string, func(), error) {
	f.checkouts.Add(1)
	if f.err != nil {
		return "", nil, f.err
	}
	return filepath.Join("testdata", "repo"), func() { f.releases.Add(1) }, nil
}

// countingRender is render.Render, counted, optionally slowed down.
type countingRender struct {
	calls atomic.Int64
	delay time.Duration
	err   error
}

func (c *countingRender) render(ctx context.Context, root string, src app.Source, opts render.Options) (*render.Result, error) {
	c.calls.Add(1)
	time.Sleep(c.delay)
	if c.err != nil {
		return nil, c.err
	}
	return render.Render(ctx, root, src, opts)
}

func newTestLoader(cache Cache) (*Loader, *fakeRepos, *countingRender) {
	repos, r := &fakeRepos{}, &countingRender{}
	return &Loader{Repos: repos, Cache: cache, Render: r.render, RendererVersion: render.Version}, repos, r
}

var appSource = app.Source{RepoURL: testRepo, Path: "app", Directory: &app.DirectorySource{Recurse: true}}

const wantObjects = "ConfigMap/web Namespace/shop Service/web Deployment/web"

func mustLoad(t *testing.T, l *Loader, src app.Source) *Loaded {
	t.Helper()
	got, err := l.Load(context.Background(), testRepo, testSHA, src)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != len(got.Objects) {
		t.Fatalf("Count = %d for %d objects", got.Count, len(got.Objects))
	}
	return got
}

func TestLoaderMemory(t *testing.T) {
	l, repos, r := newTestLoader(NewMemory(0, time.Hour))

	first := mustLoad(t, l, appSource)
	if first.CacheHit || kinds(first.Objects) != wantObjects || first.SourceType != render.SourceTypeDirectory {
		t.Fatalf("first load: hit=%v objects=%q type=%q", first.CacheHit, kinds(first.Objects), first.SourceType)
	}
	second := mustLoad(t, l, appSource)
	if !second.CacheHit || second.Digest != first.Digest || kinds(second.Objects) != wantObjects || second.SourceType != first.SourceType {
		t.Fatalf("second load: hit=%v digest %s vs %s, objects %q", second.CacheHit, second.Digest, first.Digest, kinds(second.Objects))
	}
	if repos.checkouts.Load() != 1 || r.calls.Load() != 1 || repos.releases.Load() != 1 {
		t.Fatalf("checkouts=%d renders=%d releases=%d, want 1 each", repos.checkouts.Load(), r.calls.Load(), repos.releases.Load())
	}

	top := mustLoad(t, l, app.Source{RepoURL: testRepo, Path: "app"}) // other options: other key
	if top.CacheHit || top.Count != 3 || top.Digest == first.Digest {
		t.Fatalf("non-recursive load: hit=%v count=%d", top.CacheHit, top.Count)
	}
}

func TestLoaderRedis(t *testing.T) {
	srv := startRedis(t)
	cache := NewRedis(srv.addr, time.Hour)
	defer cache.Close()

	// Two workers sharing one Redis: the second renders nothing.
	workerA, _, renderA := newTestLoader(cache)
	workerB, _, renderB := newTestLoader(cache)
	a := mustLoad(t, workerA, appSource)
	b := mustLoad(t, workerB, appSource)
	if a.CacheHit || !b.CacheHit || a.Digest != b.Digest || renderB.calls.Load() != 0 {
		t.Fatalf("a hit=%v, b hit=%v, digests %s %s, b renders %d", a.CacheHit, b.CacheHit, a.Digest, b.Digest, renderB.calls.Load())
	}

	srv.flush(t)
	flushed := mustLoad(t, workerB, appSource)
	if flushed.CacheHit || flushed.Digest != a.Digest || kinds(flushed.Objects) != wantObjects {
		t.Fatalf("after FLUSHALL: hit=%v digest=%s objects=%q", flushed.CacheHit, flushed.Digest, kinds(flushed.Objects))
	}
	if !mustLoad(t, workerA, appSource).CacheHit {
		t.Fatal("the re-render did not refill Redis")
	}

	srv.stop()
	before := renderA.calls.Load()
	for i := 0; i < 2; i++ {
		down := mustLoad(t, workerA, appSource)
		if down.CacheHit || down.Digest != a.Digest || kinds(down.Objects) != wantObjects {
			t.Fatalf("Redis down: hit=%v digest=%s objects=%q", down.CacheHit, down.Digest, kinds(down.Objects))
		}
	}
	if n := renderA.calls.Load() - before; n != 2 {
		t.Fatalf("Redis down: %d renders for 2 loads, want 2", n)
	}
}

func TestLoaderConcurrentLoadsRenderOnce(t *testing.T) {
	l, _, r := newTestLoader(NewMemory(0, 0))
	r.delay = 200 * time.Millisecond
	const callers = 10
	results := make([]*Loaded, callers)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := l.Load(context.Background(), testRepo, testSHA, appSource)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = res
		}()
	}
	wg.Wait()
	if n := r.calls.Load(); n != 1 {
		t.Fatalf("%d renders for %d concurrent loads, want 1", n, callers)
	}
	seen := map[any]bool{}
	for _, res := range results {
		if res == nil || res.Digest != results[0].Digest {
			t.Fatal("callers got different results")
		}
		if seen[res.Objects[0]] {
			t.Fatal("two callers share an object")
		}
		seen[res.Objects[0]] = true
	}
}

func TestLoaderUnreadableEntry(t *testing.T) {
	cache := NewMemory(0, 0)
	l, _, r := newTestLoader(cache)
	key := Key(testRepo, testSHA, appSource, render.Version)
	cache.Put(context.Background(), key, []byte("not a payload"))

	got := mustLoad(t, l, appSource)
	if got.CacheHit || kinds(got.Objects) != wantObjects {
		t.Fatalf("unreadable entry: hit=%v objects=%q", got.CacheHit, kinds(got.Objects))
	}
	if !mustLoad(t, l, appSource).CacheHit || r.calls.Load() != 1 {
		t.Fatal("the unreadable entry was not replaced")
	}
}

func TestLoaderErrors(t *testing.T) {
	t.Run("render errors are not cached", func(t *testing.T) {
		l, repos, r := newTestLoader(NewMemory(0, 0))
		r.err = errors.New("boom")
		for i := 0; i < 2; i++ {
			if _, err := l.Load(context.Background(), testRepo, testSHA, appSource); !errors.Is(err, r.err) {
				t.Fatalf("Load: %v, want the render error", err)
			}
		}
		if r.calls.Load() != 2 || repos.releases.Load() != 2 {
			t.Fatalf("renders=%d releases=%d, want 2 and 2", r.calls.Load(), repos.releases.Load())
		}
	})
	t.Run("user errors pass through", func(t *testing.T) {
		l, _, _ := newTestLoader(nil)
		_, err := l.Load(context.Background(), testRepo, testSHA, app.Source{Path: "../x"})
		if !render.IsUserError(err) {
			t.Fatalf("Load: %v, want a render user error", err)
		}
	})
	t.Run("checkout errors pass through", func(t *testing.T) {
		l, repos, r := newTestLoader(nil)
		repos.err = &gitsource.CommitNotFoundError{RepoURL: testRepo, SHA: testSHA}
		_, err := l.Load(context.Background(), testRepo, testSHA, appSource)
		if !gitsource.IsNotFound(err) || r.calls.Load() != 0 {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("a branch is not a SHA", func(t *testing.T) {
		l, repos, _ := newTestLoader(nil)
		_, err := l.Load(context.Background(), "https://me:secret@h/r.git", "main", appSource)
		if err == nil || !strings.Contains(err.Error(), "not a full commit SHA") || strings.Contains(err.Error(), "secret") || repos.checkouts.Load() != 0 {
			t.Fatalf("Load: %v", err)
		}
	})
	t.Run("caller gives up", func(t *testing.T) {
		l, _, r := newTestLoader(NewMemory(0, 0))
		r.delay = 300 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := l.Load(ctx, testRepo, testSHA, appSource); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Load: %v", err)
		}
		// The render went on and filled the cache for the next caller.
		time.Sleep(400 * time.Millisecond)
		if !mustLoad(t, l, appSource).CacheHit {
			t.Fatal("the abandoned render did not fill the cache")
		}
	})
}

// TestLoaderFromGit renders Argo CD's guestbook example from a real Git
// repository through gitsource.
func TestLoaderFromGit(t *testing.T) {
	corpus := ""
	for _, dir := range []string{"../../../shared/corpus/argocd-example-apps/guestbook", "/work/shared/corpus/argocd-example-apps/guestbook"} {
		if _, err := os.Stat(dir); err == nil {
			corpus = dir
			break
		}
	}
	if corpus == "" {
		t.Fatal("argocd-example-apps corpus not found beside the checkout or in /work/shared/corpus")
	}
	work, bare := t.TempDir(), filepath.Join(t.TempDir(), "apps.git")
	files, _ := filepath.Glob(filepath.Join(corpus, "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(work, "guestbook", filepath.Base(f))
		_ = os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("", "init", "--quiet", "--bare", "--initial-branch=main", bare)
	git(work, "init", "--quiet", "--initial-branch=main")
	git(work, "add", "-A")
	git(work, "commit", "--quiet", "-m", "guestbook")
	git(work, "push", "--quiet", bare, "main")

	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	src := app.Source{RepoURL: bare, TargetRevision: "HEAD", Path: "guestbook"}
	sha, err := repos.Resolve(ctx, src.RepoURL, src.TargetRevision)
	if err != nil {
		t.Fatal(err)
	}
	l := &Loader{Repos: repos, Cache: NewMemory(0, 0)}
	first, err := l.Load(ctx, src.RepoURL, sha, src)
	if err != nil {
		t.Fatal(err)
	}
	if kinds(first.Objects) != "Service/guestbook-ui Deployment/guestbook-ui" || first.SourceType != render.SourceTypeDirectory {
		t.Fatalf("guestbook: %q (%s)", kinds(first.Objects), first.SourceType)
	}
	second, err := l.Load(ctx, src.RepoURL, sha, src)
	if err != nil || !second.CacheHit || second.Digest != first.Digest {
		t.Fatalf("second load: %+v, %v", second, err)
	}
}
