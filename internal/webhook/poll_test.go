package webhook

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
)

// TestPollerRefreshesTheAppsOfWhatMoved polls two repositories of the
// Git server: the first round only lists them; a commit on one
// repository's main and a new tag refresh that repository's apps, each
// once per moved ref, with the ref's commits before and after; a round
// with nothing moved refreshes none; one ls-remote a repository a round,
// whatever its apps.
func TestPollerRefreshesTheAppsOfWhatMoved(t *testing.T) {
	s := gittest.NewServer(t)
	one, other := s.NewRepo(t, "one"), s.NewRepo(t, "other")
	first := one.Commit("first", map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})
	one.Push()
	other.Commit("first", map[string]string{"app/cm.yaml": "kind: ConfigMap\n"})
	other.Push()
	f := newFakeRefresher(App{Name: "a", RepoURL: s.URL("one")}, App{Name: "b", RepoURL: s.URL("one")},
		App{Name: "c", RepoURL: s.URL("other")})
	r, m := newTestReceiver(t, Options{}, f)
	run(t, r)
	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p := NewPoller(r, repos, time.Hour)
	ctx := context.Background()

	listings := s.Listings()
	p.Round(ctx)
	if n := s.Listings() - listings; n != 2 {
		t.Errorf("the first round listed %d times, want once for each of the 2 repositories", n)
	}
	settle(t, f, 0)

	second := one.Commit("second", map[string]string{"app/cm.yaml": "kind: Secret\n"})
	one.Git("tag", "v1")
	one.Push()
	one.Git("push", "--quiet", "origin", "v1")
	p.Round(ctx)
	settle(t, f, 4)
	for _, app := range []string{"a", "b"} {
		got := slices.Clone(f.refreshed[app])
		slices.SortFunc(got, func(a, b Push) int { return strings.Compare(a.Ref, b.Ref) })
		if len(got) != 2 || got[0].Ref != "refs/heads/main" || got[0].Before != first || got[0].After != second || !got[0].DefaultBranch ||
			got[1].Ref != "refs/tags/v1" || got[1].Before != "" || got[1].After != second || got[1].DefaultBranch {
			t.Errorf("app %s refreshed with %+v, want main from %s to %s (the default branch) and the new tag v1 at %s", app, got, first, second, second)
		}
		if got[0].Provider != Polled {
			t.Errorf("app %s: push of provider %q, want %q", app, got[0].Provider, Polled)
		}
	}
	if n := f.count("c"); n != 0 {
		t.Errorf("app c of the other repository refreshed %d times, want 0", n)
	}

	listings = s.Listings()
	p.Round(ctx)
	settle(t, f, 4)
	if n := s.Listings() - listings; n != 2 {
		t.Errorf("a round listed %d times, want 2", n)
	}
	if n := testutil.ToFloat64(m.signals); n != 4 {
		t.Errorf("ferry_webhook_refresh_signals_total = %v, want 4", n)
	}
}

// settle waits for the receiver's pool to have sent want refreshes, and
// a little more for any beyond.
func settle(t *testing.T, f *fakeRefresher, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for f.total() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if n := f.total(); n != want {
		t.Fatalf("%d refreshes, want %d: %v", n, want, f.refreshed)
	}
}
