package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
	"github.com/ferry-gitops/ferry/internal/manifests"
	"github.com/ferry-gitops/ferry/internal/netpolicy"
	"github.com/ferry-gitops/ferry/internal/redisconn"
	"github.com/ferry-gitops/ferry/internal/render"
)

const sharedKey = "the-workers-shared-cache-key"

// TestCacheChoice: which manifest cache New builds, and how it seals it.
// A shared Redis needs the workers' key to be of use: a reader that
// requires it (ferry app diff) has no cache without it; a worker seals
// with a random key of its own.
func TestCacheChoice(t *testing.T) {
	redis := &redisconn.Options{Addr: "127.0.0.1:1"}
	shared, err := manifests.NewSealer([]byte(sharedKey))
	require.NoError(t, err)
	sealed := shared.Seal("k", []byte("set"), false)
	for _, tc := range []struct {
		name       string
		cache      Cache
		want       manifests.Cache // its type
		opensOurs  bool            // the sealer opens the workers' entries
		wantSealer bool
	}{
		{name: "none", cache: Cache{}},
		{name: "memory, random key", cache: Cache{Memory: 1 << 20}, want: &manifests.Memory{}, wantSealer: true},
		{name: "memory, shared key", cache: Cache{Memory: 1 << 20, Key: sharedKey}, want: &manifests.Memory{}, wantSealer: true, opensOurs: true},
		{name: "redis, shared key", cache: Cache{Redis: redis, Key: sharedKey, KeyRequired: true}, want: &manifests.Redis{}, wantSealer: true, opensOurs: true},
		{name: "redis, no key, required", cache: Cache{Redis: redis, KeyRequired: true}},
		{name: "redis, no key, a worker's own", cache: Cache{Redis: redis}, want: &manifests.Redis{}, wantSealer: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(Options{CacheDir: t.TempDir(), Cache: tc.cache})
			require.NoError(t, err)
			if tc.want == nil {
				assert.Nil(t, p.Loader.Cache)
				assert.Nil(t, p.Loader.Sealer, "nothing to seal")
				return
			}
			assert.IsType(t, tc.want, p.Loader.Cache)
			require.NotNil(t, p.Loader.Sealer, "a cache's entries are always sealed")
			_, err = p.Loader.Sealer.Open("k", sealed)
			assert.Equal(t, tc.opensOurs, err == nil, "opens the entries sealed with FERRY_CACHE_KEY: %v", err)
		})
	}
	failures := 0
	p, err := New(Options{CacheDir: t.TempDir(), Cache: Cache{Memory: 1 << 20, Key: "another-workers-cache-key", OnVerifyFailure: func() { failures++ }}})
	require.NoError(t, err)
	_, err = p.Loader.Sealer.Open("k", sealed)
	require.Error(t, err)
	assert.Equal(t, 1, failures, "OnVerifyFailure is told of an entry that fails to open")

	_, err = New(Options{CacheDir: t.TempDir(), Cache: Cache{Redis: redis, Key: "short"}})
	require.ErrorContains(t, err, manifests.EnvCacheKey, "a key too short to seal with is refused, naming it")
	_, err = New(Options{})
	require.Error(t, err, "no cache directory")
}

// observer records what a Loader tells its Observer.
type observer struct {
	mu       sync.Mutex
	loads    []bool
	rendered []string
	requests []string
}

func (o *observer) Loaded(hit bool) { o.mu.Lock(); o.loads = append(o.loads, hit); o.mu.Unlock() }
func (o *observer) Rendered(st string, _ time.Duration, _ error) {
	o.mu.Lock()
	o.rendered = append(o.rendered, st)
	o.mu.Unlock()
}
func (o *observer) request(rt string, _ time.Duration, _ error) {
	o.mu.Lock()
	o.requests = append(o.requests, rt)
	o.mu.Unlock()
}

// TestOptionsReachTheLoader: on a real Git server, a pipeline renders
// with the settings it is given (a render limit, named by its flag),
// caches and observes its loads, tells of its Git requests, bounds its
// checkouts naming the flag that raises them, and checks the host policy.
func TestOptionsReachTheLoader(t *testing.T) {
	s := gittest.NewServer(t)
	repo := s.NewRepo(t, "app")
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  pad: " + strings.Repeat("x", 200) + "\n"
	sha := repo.Commit("app", map[string]string{
		"app/a.yaml":  strings.ReplaceAll(cm, "%s", "a"),
		"many/a.yaml": strings.ReplaceAll(cm, "%s", "a"), "many/b.yaml": strings.ReplaceAll(cm, "%s", "b"),
	})
	repo.Push()
	url := s.URL("app")
	load := func(p *Pipeline, path string) (*manifests.Loaded, error) {
		return p.Loader.LoadApp(context.Background(), manifests.Request{RepoURL: url, SHA: sha, Source: app.Source{RepoURL: url, Path: path}, App: "shop"})
	}
	loopback, err := netpolicy.ParseHosts([]string{"127.0.0.1"}, "--render-allow-hosts")
	require.NoError(t, err)

	obs := &observer{}
	settings := &render.Renderer{Limits: render.Limits{MaxObjects: 1, Flags: render.LimitFlags{Objects: "--render-max-objects"}}}
	p, err := New(Options{CacheDir: filepath.Join(t.TempDir(), "repos"), Hosts: loopback, Render: settings,
		Cache: Cache{Memory: 1 << 20}, Observer: obs, ObserveRequest: obs.request,
		Checkout: Checkout{MaxFileBytes: 10 << 10, FileFlag: "--checkout-max-file-size"}})
	require.NoError(t, err)
	assert.Same(t, settings, p.Loader.Renderer, "no Sandbox: the settings render in this process")
	assert.Same(t, p.Repos, p.Loader.Repos)
	assert.Same(t, p.Charts, p.Loader.Charts)
	for range 2 {
		set, err := load(p, "app")
		require.NoError(t, err)
		assert.Equal(t, 1, set.Count)
	}
	assert.Equal(t, []bool{false, true}, obs.loads, "the second load is a hit in the memory cache")
	assert.Equal(t, []string{render.SourceTypeDirectory}, obs.rendered)
	assert.NotEmpty(t, obs.requests, "Git's requests are observed")
	fresh, err := p.LoaderWith(Cache{Memory: 1 << 20})
	require.NoError(t, err)
	assert.Same(t, p.Repos, fresh.Repos)
	assert.Same(t, settings, fresh.Renderer)
	set, err := fresh.LoadApp(context.Background(), manifests.Request{RepoURL: url, SHA: sha, Source: app.Source{RepoURL: url, Path: "app"}, App: "shop"})
	require.NoError(t, err)
	assert.False(t, set.CacheHit, "another manifest cache, empty")
	_, err = load(p, "many")
	assert.ErrorContains(t, err, "--render-max-objects", "the render limits are the settings'")
	assert.Contains(t, p.Loader.FailureTag, "MaxObjects:1")

	small, err := New(Options{CacheDir: filepath.Join(t.TempDir(), "repos"), Hosts: loopback, Checkout: Checkout{MaxFileBytes: 100, FileFlag: "--checkout-max-file-size"}})
	require.NoError(t, err)
	_, err = load(small, "app")
	var limit *gitsource.LimitError
	require.True(t, errors.As(err, &limit), "a file over the checkout limit: %v", err)
	assert.ErrorContains(t, err, "--checkout-max-file-size")

	none, err := netpolicy.ParseHosts(nil, "--render-allow-hosts")
	require.NoError(t, err)
	t.Cleanup(func() { gitsource.InstallHostPolicy(nil) })
	denied, err := New(Options{CacheDir: filepath.Join(t.TempDir(), "repos"), Hosts: none})
	require.NoError(t, err)
	_, err = load(denied, "app")
	assert.True(t, netpolicy.IsDenied(err), "a loopback Git server is refused without --render-allow-hosts: %v", err)
}
