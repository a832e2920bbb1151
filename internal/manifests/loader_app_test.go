package manifests

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

func loadApp(t *testing.T, l *Loader, name, ns string, src app.Source) *Loaded {
	t.Helper()
	got, err := l.LoadApp(context.Background(), Request{RepoURL: testRepo, SHA: testSHA, Source: src, App: name, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLoadAppSharesSetsAcrossApps: Applications on the same path and
// options share a directory set; a Helm set is per release name and
// namespace, found again without a checkout.
func TestLoadAppSharesSetsAcrossApps(t *testing.T) {
	l, repos, r := newTestLoader(NewMemory(0, time.Hour))

	a := loadApp(t, l, "shop-a", "a", appSource)
	b := loadApp(t, l, "shop-b", "b", appSource)
	if a.CacheHit || !b.CacheHit || a.Digest != b.Digest || r.calls.Load() != 1 {
		t.Fatalf("directory source: hits %v %v, renders %d", a.CacheHit, b.CacheHit, r.calls.Load())
	}

	chart := app.Source{RepoURL: testRepo, Path: "chart"} // detected, not explicit
	one := loadApp(t, l, "one", "ns1", chart)
	if one.CacheHit || one.SourceType != render.SourceTypeHelm || kinds(one.Objects) != "ConfigMap/one-web" || one.Objects[0].GetNamespace() != "ns1" {
		t.Fatalf("chart for one: hit=%v %s %q ns %q", one.CacheHit, one.SourceType, kinds(one.Objects), one.Objects[0].GetNamespace())
	}
	two := loadApp(t, l, "two", "ns1", chart)
	if two.CacheHit || kinds(two.Objects) != "ConfigMap/two-web" || two.Digest == one.Digest {
		t.Fatalf("chart for two: hit=%v %q", two.CacheHit, kinds(two.Objects))
	}
	checkouts := repos.checkouts.Load()
	again := loadApp(t, l, "one", "ns1", chart)
	if !again.CacheHit || again.Digest != one.Digest || repos.checkouts.Load() != checkouts {
		t.Fatalf("chart for one again: hit=%v, checkouts %d -> %d", again.CacheHit, checkouts, repos.checkouts.Load())
	}
	otherNS := loadApp(t, l, "one", "ns2", chart)
	if otherNS.CacheHit || otherNS.Objects[0].GetNamespace() != "ns2" {
		t.Fatalf("chart for one in ns2: hit=%v ns %q", otherNS.CacheHit, otherNS.Objects[0].GetNamespace())
	}
	// An explicit release name: every app naming it shares the set.
	named := chart
	named.Helm = &app.HelmSource{ReleaseName: "shared"}
	x := loadApp(t, l, "x", "ns1", named)
	y := loadApp(t, l, "y", "ns1", named)
	if x.CacheHit || !y.CacheHit || kinds(y.Objects) != "ConfigMap/shared-web" {
		t.Fatalf("explicit release name: hits %v %v %q", x.CacheHit, y.CacheHit, kinds(y.Objects))
	}
}

func TestLoadWithoutAppNameNeedsReleaseName(t *testing.T) {
	l, _, _ := newTestLoader(nil)
	_, err := l.Load(context.Background(), testRepo, testSHA, app.Source{Path: "chart"})
	if !render.IsUserError(err) {
		t.Fatalf("Load of a chart without an app name: %v", err)
	}
	got, err := l.Load(context.Background(), testRepo, testSHA, app.Source{Path: "chart", Helm: &app.HelmSource{ReleaseName: "r"}})
	if err != nil || kinds(got.Objects) != "ConfigMap/r-web" || got.Objects[0].GetNamespace() != "default" {
		t.Fatalf("Load with a release name: %v", err)
	}
}

func TestLoaderRendererVersion(t *testing.T) {
	cache := NewMemory(0, 0)
	plain := &Loader{Repos: &fakeRepos{}, Cache: cache}
	kube135 := &Loader{Repos: &fakeRepos{}, Cache: cache, Renderer: &render.Renderer{Capabilities: render.Capabilities{KubeVersion: "v1.35.0"}}}
	if loadApp(t, plain, "a", "", appSource).CacheHit {
		t.Fatal("first load hit")
	}
	if loadApp(t, kube135, "a", "", appSource).CacheHit {
		t.Fatal("a renderer with other capabilities reused the set: its keys must differ")
	}
	if !loadApp(t, kube135, "a", "", appSource).CacheHit {
		t.Fatal("the same renderer missed")
	}
}

type countingObserver struct {
	mu       sync.Mutex
	hits     int
	misses   int
	rendered map[string]int
}

func (o *countingObserver) Loaded(hit bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if hit {
		o.hits++
	} else {
		o.misses++
	}
}

func (o *countingObserver) Rendered(typ string, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err == nil {
		o.rendered[typ]++
	}
}

func TestLoaderObserver(t *testing.T) {
	obs := &countingObserver{rendered: map[string]int{}}
	l, _, _ := newTestLoader(NewMemory(0, 0))
	l.Observer = obs
	loadApp(t, l, "a", "", appSource)
	loadApp(t, l, "a", "", appSource)
	loadApp(t, l, "a", "", app.Source{RepoURL: testRepo, Path: "chart"})
	if obs.hits != 1 || obs.misses != 2 || obs.rendered[render.SourceTypeDirectory] != 1 || obs.rendered[render.SourceTypeHelm] != 1 {
		t.Fatalf("observed hits %d misses %d renders %v", obs.hits, obs.misses, obs.rendered)
	}
}
