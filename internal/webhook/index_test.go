package webhook

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndexMatchesURLForms: one repository written the ways users write it
// in spec.source.repoURL is one repository; near names are not.
func TestIndexMatchesURLForms(t *testing.T) {
	f := newFakeRefresher(
		App{"https", "https://github.com/Acme/Shop-Config.git"},
		App{"https-no-suffix", "https://github.com/Acme/Shop-Config"},
		App{"trailing-slash", "https://github.com/Acme/Shop-Config/"},
		App{"lower-case", "https://github.com/acme/shop-config.git"},
		App{"host-case", "https://GitHub.COM/Acme/Shop-Config"},
		App{"default-port", "https://github.com:443/Acme/Shop-Config.git"},
		App{"with-user", "https://ci-bot@github.com/Acme/Shop-Config.git"},
		App{"scp", "git@github.com:Acme/Shop-Config.git"},
		App{"ssh", "ssh://git@github.com/Acme/Shop-Config"},
		App{"other-repo", "https://github.com/Acme/Shop-Config-2.git"},
		App{"other-owner", "https://github.com/Acme2/Shop-Config.git"},
		App{"other-host", "https://gitlab.com/Acme/Shop-Config.git"},
		App{"gitlab-ssh-port", "ssh://git@gitlab.example.com:2222/platform/deploy/payments.git"},
		App{"gitlab-scp", "git@gitlab.example.com:platform/deploy/payments.git"},
		App{"gitlab-http", "https://gitlab.example.com/platform/deploy/payments"},
		App{"gitlab-other-port", "https://gitlab.example.com:8443/platform/deploy/payments"},
		App{"no-url", ""},
	)
	x := NewIndex(f.Apps, time.Minute, time.Second)
	tests := []struct {
		fixture string
		want    []string
	}{
		{"github-push.json", []string{"default-port", "host-case", "https", "https-no-suffix", "lower-case", "scp", "ssh", "trailing-slash", "with-user"}},
		{"gitlab-push.json", []string{"gitlab-http", "gitlab-scp", "gitlab-ssh-port"}},
		{"gitea-push.json", nil},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			p := providerOf(tt.fixture)
			pushes, err := providers[p].parse(fixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			matches, _, err := x.Lookup(context.Background(), pushes[0].RepoKeys())
			if err != nil {
				t.Fatal(err)
			}
			got := names(matches)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func names(matches []Match) []string {
	var out []string
	for _, m := range matches {
		out = append(out, m.App)
	}
	return out
}

// TestIndexMatchesEverySourceOfAnApp: an app of several repositories (one
// App per source) is found by a push to any of them, once, with the repo
// URLs of its own that the push matched, as it writes them.
func TestIndexMatchesEverySourceOfAnApp(t *testing.T) {
	f := newFakeRefresher(
		App{"multi", "https://git.example.org/platform/chart.git"},
		App{"multi", "https://git.example.org/platform/values.git"},
		App{"multi", "git@git.example.org:platform/values.git"},
		App{"single", "https://git.example.org/platform/values"},
		App{"other", "https://git.example.org/platform/other.git"},
	)
	x := NewIndex(f.Apps, time.Minute, time.Second)
	got, _, err := x.Lookup(context.Background(), []string{repoKey("https://git.example.org/platform/values.git")})
	if err != nil {
		t.Fatal(err)
	}
	want := []Match{
		{App: "multi", RepoURLs: []string{"https://git.example.org/platform/values.git", "git@git.example.org:platform/values.git"}},
		{App: "single", RepoURLs: []string{"https://git.example.org/platform/values"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("push to values (-want +got)\n%s", diff)
	}
	got, _, err = x.Lookup(context.Background(), []string{repoKey("https://git.example.org/platform/chart")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Match{{App: "multi", RepoURLs: []string{"https://git.example.org/platform/chart.git"}}}, got); diff != "" {
		t.Errorf("push to chart (-want +got)\n%s", diff)
	}
}

func providerOf(fixture string) Provider {
	for _, p := range Providers {
		if len(fixture) > len(p) && fixture[:len(p)] == string(p) {
			return p
		}
	}
	return ""
}

// TestIndexRebuild: a miss lists the apps again when the index is older
// than its min age; a hit never waits for a listing: from an index older
// than its max age (or invalidated) it is stale, and Added lists again and
// returns only the apps the listing adds; concurrent listings are one.
func TestIndexRebuild(t *testing.T) {
	f := newFakeRefresher(App{"a", "https://git.example.org/a.git"})
	x := NewIndex(f.Apps, 10*time.Second, time.Second)
	now := time.Unix(1000, 0)
	x.now = func() time.Time { return now }
	keys := func(repo string) []string { return []string{repoKey(repo)} }
	lookup := func(repo string) ([]Match, bool) {
		t.Helper()
		got, stale, err := x.Lookup(context.Background(), keys(repo))
		require.NoError(t, err)
		return got, stale
	}
	lists := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.lists }
	addApps := func(apps ...App) { f.mu.Lock(); f.apps = append(f.apps, apps...); f.mu.Unlock() }

	got, stale := lookup("https://git.example.org/a")
	assert.Equal(t, []string{"a"}, names(got), "the first lookup lists")
	assert.False(t, stale)
	assert.Equal(t, 1, lists())
	addApps(App{"b", "https://git.example.org/b.git"}, App{"a2", "https://git.example.org/a.git"})

	now = now.Add(500 * time.Millisecond)
	got, _ = lookup("https://git.example.org/b")
	assert.Empty(t, got, "a miss younger than the min age")
	assert.Equal(t, 1, lists())
	now = now.Add(time.Second)
	got, stale = lookup("https://git.example.org/b")
	assert.Equal(t, []string{"b"}, names(got), "a miss older than the min age lists again")
	assert.False(t, stale)
	assert.Equal(t, 2, lists())

	now = now.Add(5 * time.Second)
	got, stale = lookup("https://git.example.org/a")
	assert.Equal(t, []string{"a", "a2"}, names(got), "a hit younger than the max age")
	assert.False(t, stale)
	assert.Equal(t, 2, lists())

	addApps(App{"a3", "https://git.example.org/A"})
	x.Invalidate()
	got, stale = lookup("https://git.example.org/a")
	assert.Equal(t, []string{"a", "a2"}, names(got), "an invalidated index answers a hit without listing")
	assert.True(t, stale)
	assert.Equal(t, 2, lists())
	added, err := x.Added(context.Background(), keys("https://git.example.org/a"), got)
	require.NoError(t, err)
	assert.Equal(t, []Match{{App: "a3", RepoURLs: []string{"https://git.example.org/A"}}}, added, "only what the listing adds")
	assert.Equal(t, 3, lists())

	now = now.Add(11 * time.Second)
	got, stale = lookup("https://git.example.org/a")
	assert.Equal(t, []string{"a", "a2", "a3"}, names(got))
	assert.True(t, stale, "older than the max age")
	assert.Equal(t, 3, lists())
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			added, err := x.Added(context.Background(), keys("https://git.example.org/a"), got)
			assert.NoError(t, err)
			assert.Empty(t, added)
		})
	}
	wg.Wait()
	if n := lists(); n < 4 || n > 5 {
		t.Fatalf("50 concurrent listings: %d lists in all, want 4 (or 5 if one came late)", n)
	}
}
