package gitsource

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixtureRepo has main (HEAD) at commit a, branch dev at commit b, a
// lightweight tag v1 on a and an annotated tag v2 on b.
type fixtureRepo struct {
	url  string
	work *workRepo
	a, b string
}

func newFixtureRepo(t *testing.T, s *gitServer, name string) fixtureRepo {
	t.Helper()
	w := s.NewRepo(t, name)
	a := w.Commit("first", map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})
	w.Git("tag", "v1")
	w.Git("checkout", "--quiet", "-b", "dev")
	b := w.Commit("second", map[string]string{"app/cm.yaml": "kind: Secret\n"})
	w.Git("tag", "-a", "v2", "-m", "release 2")
	w.Git("checkout", "--quiet", "main")
	w.Push()
	return fixtureRepo{url: s.URL(name), work: w, a: a, b: b}
}

func TestResolve(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "guestbook")
	repos := newRepos(t, Options{})

	tests := []struct {
		name, revision, want string
	}{
		{"empty means HEAD", "", fx.a},
		{"HEAD", "HEAD", fx.a},
		{"default branch", "main", fx.a},
		{"other branch", "dev", fx.b},
		{"full branch ref", "refs/heads/dev", fx.b},
		{"lightweight tag", "v1", fx.a},
		{"annotated tag is peeled", "v2", fx.b},
		{"full tag ref is peeled", "refs/tags/v2", fx.b},
		{"full SHA", fx.b, fx.b},
		{"full SHA upper case", strings.ToUpper(fx.b), fx.b},
		{"short SHA", fx.b[:8], fx.b},
		{"spaces around", " dev ", fx.b},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := repos.Resolve(context.Background(), fx.url, tc.revision)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.revision, err)
			}
			if got != tc.want {
				t.Fatalf("Resolve(%q) = %s, want %s", tc.revision, got, tc.want)
			}
		})
	}
	if n := repos.LsRemoteCalls(fx.url); n != 1 {
		t.Errorf("LsRemoteCalls = %d, want 1 (one listing within the TTL)", n)
	}
}

func TestResolveUnknownRevision(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "guestbook")
	repos := newRepos(t, Options{})

	for _, rev := range []string{"nope", "deadbeef0"} {
		_, err := repos.Resolve(context.Background(), fx.url, rev)
		if err == nil {
			t.Fatalf("Resolve(%q): no error", rev)
		}
		var notFound *RevisionNotFoundError
		if !errors.As(err, &notFound) || !IsNotFound(err) {
			t.Fatalf("Resolve(%q): error %T %v, want *RevisionNotFoundError", rev, err, err)
		}
		for _, want := range []string{fx.url, `"` + rev + `"`, "branches dev, main", "tags v1, v2"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Resolve(%q) error %q does not mention %q", rev, err, want)
			}
		}
	}
}

func TestResolveEmptyRepository(t *testing.T) {
	s := newGitServer(t)
	s.NewRepo(t, "empty")
	repos := newRepos(t, Options{})
	_, err := repos.Resolve(context.Background(), s.URL("empty"), "main")
	if !IsNotFound(err) || !strings.Contains(err.Error(), "no branches or tags") {
		t.Fatalf("Resolve on an empty repository: %v", err)
	}
}

func TestResolveMissingRepository(t *testing.T) {
	s := newGitServer(t)
	repos := newRepos(t, Options{})
	_, err := repos.Resolve(context.Background(), s.URL("missing"), "main")
	if err == nil || IsNotFound(err) || !strings.Contains(err.Error(), s.URL("missing")) {
		t.Fatalf("Resolve on a missing repository: %v", err)
	}
}

func TestResolveSharesOneLsRemote(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "shared")
	repos := newRepos(t, Options{RefsTTL: time.Minute})

	const apps = 20
	var wg sync.WaitGroup
	errs := make(chan error, apps)
	for i := 0; i < apps; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sha, err := repos.Resolve(context.Background(), fx.url, "main")
			if err == nil && sha != fx.a {
				err = errors.New("wrong sha " + sha)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := repos.LsRemoteCalls(fx.url); n != 1 {
		t.Errorf("LsRemoteCalls = %d after %d concurrent Resolve calls, want 1", n, apps)
	}
	if n := s.Listings(); n != 1 {
		t.Errorf("server saw %d ref listings, want 1", n)
	}
	// Another spelling of the same repository shares the listing too.
	if _, err := repos.Resolve(context.Background(), strings.TrimSuffix(fx.url, ".git")+"/", "dev"); err != nil {
		t.Fatal(err)
	}
	if n := s.Listings(); n != 1 {
		t.Errorf("server saw %d ref listings after a second URL spelling, want 1", n)
	}
}

func TestResolveTTLAndForceRefresh(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "ttl")
	const ttl = 300 * time.Millisecond
	repos := newRepos(t, Options{RefsTTL: ttl})
	ctx := context.Background()

	resolve := func(opts ...ResolveOption) string {
		t.Helper()
		sha, err := repos.Resolve(ctx, fx.url, "main", opts...)
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	start := time.Now()
	if got := resolve(); got != fx.a {
		t.Fatalf("first Resolve = %s, want %s", got, fx.a)
	}
	c := fx.work.Commit("third", map[string]string{"app/new.yaml": "kind: Namespace\n"})
	fx.work.Push()

	if got := resolve(); got != fx.a && time.Since(start) < ttl {
		t.Fatalf("Resolve within the TTL = %s, want the cached %s", got, fx.a)
	}
	if n := repos.LsRemoteCalls(fx.url); n != 1 && time.Since(start) < ttl {
		t.Fatalf("LsRemoteCalls within the TTL = %d, want 1", n)
	}
	// 1, or 2 when the commit and push took longer than the TTL (a loaded
	// machine): the resolve before this one listed the refs again then.
	before := repos.LsRemoteCalls(fx.url)
	time.Sleep(ttl)
	if got := resolve(); got != c {
		t.Fatalf("Resolve after the TTL = %s, want %s", got, c)
	}
	if n := repos.LsRemoteCalls(fx.url); n != before+1 {
		t.Fatalf("LsRemoteCalls after the TTL = %d, want %d", n, before+1)
	}

	d := fx.work.Commit("fourth", map[string]string{"app/new.yaml": "kind: Service\n"})
	fx.work.Push()
	if got := resolve(ForceRefresh()); got != d {
		t.Fatalf("Resolve with ForceRefresh = %s, want %s", got, d)
	}
	if n := repos.LsRemoteCalls(fx.url); n != before+2 {
		t.Fatalf("LsRemoteCalls after ForceRefresh = %d, want %d", n, before+2)
	}
}

func TestResolveCallerContext(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "ctx")
	repos := newRepos(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := repos.Resolve(ctx, fx.url, "main"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Resolve with a cancelled context: %v", err)
	}
	// The shared listing was not cancelled with that caller.
	if _, err := repos.Resolve(context.Background(), fx.url, "main"); err != nil {
		t.Fatal(err)
	}
}

// TestResolveRefusesAPlaceholderScheme: a repoURL whose scheme Ferry does
// not fetch over (cnoe://name, git://) gives a typed error naming the URL
// and the forms to write, and makes no ls-remote; a full SHA's checkout
// refuses it the same way.
func TestResolveRefusesAPlaceholderScheme(t *testing.T) {
	repos := newRepos(t, Options{})
	for _, u := range []string{"cnoe://jupyterhub", "git://git.example.com/org/apps.git"} {
		_, err := repos.Resolve(context.Background(), u, "HEAD")
		if !IsUnsupportedScheme(err) || !strings.Contains(err.Error(), u) || !strings.Contains(err.Error(), "https://host/org/repo.git") {
			t.Errorf("Resolve(%s) = %v, want an UnsupportedSchemeError naming it and the forms to write", u, err)
		}
		if n := repos.LsRemoteCalls(u); n != 0 {
			t.Errorf("Resolve(%s) made %d ls-remote calls, want 0", u, n)
		}
		_, release, err := repos.Checkout(context.Background(), u, strings.Repeat("a", 40))
		if err == nil {
			release()
		}
		if !IsUnsupportedScheme(err) {
			t.Errorf("Checkout(%s) = %v, want an UnsupportedSchemeError", u, err)
		}
	}
}

// TestListRefs lists the fixture's refs from the Git server: its default
// branch, each branch's and tag's commit (the annotated tag's peeled),
// and nothing else.
func TestListRefs(t *testing.T) {
	s := newGitServer(t)
	fx := newFixtureRepo(t, s, "listed")
	repos := newRepos(t, Options{})
	refs, err := repos.ListRefs(context.Background(), fx.url)
	if err != nil {
		t.Fatal(err)
	}
	want := Refs{Head: "refs/heads/main", Commits: map[string]string{
		"refs/heads/main": fx.a, "refs/heads/dev": fx.b, "refs/tags/v1": fx.a, "refs/tags/v2": fx.b}}
	if !reflect.DeepEqual(refs, want) {
		t.Errorf("ListRefs = %+v, want %+v", refs, want)
	}
}
