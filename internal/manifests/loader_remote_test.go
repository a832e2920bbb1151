package manifests

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestLoaderRemoteBases: an app whose kustomization names a base in another
// repository at a tag, on a real Git server. The Loader fetches the base
// (the renderer never does), answers later loads from the cache while the
// tag names the same commit (an ls-remote, no fetch, no render), and
// renders again when the tag moves to another commit of the base, without
// a new commit of the app.
func TestLoaderRemoteBases(t *testing.T) {
	s := gittest.NewServer(t)
	base := s.NewRepo(t, "base")
	base.Commit("base v1", map[string]string{
		"base/kustomization.yaml": "resources:\n- cm.yaml\n",
		"base/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\ndata:\n  say: v1\n",
	})
	base.Git("tag", "v1")
	base.Push()
	base.Git("push", "origin", "v1")
	appRepo := s.NewRepo(t, "app")
	sha := appRepo.Commit("app", map[string]string{"app/kustomization.yaml": "namePrefix: shop-\nresources:\n- " + s.URL("base") + "//base?ref=v1\n"})
	appRepo.Push()

	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir(), RefsTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	renderer := &render.Renderer{AllowRemoteBases: true}
	var renders int
	l := &Loader{Repos: repos, Cache: NewMemory(64<<20, 0), Renderer: renderer,
		Render: func(ctx context.Context, root string, src app.Source, opts render.Options) (*render.Result, error) {
			renders++
			return renderer.Render(ctx, root, src, opts)
		}}
	req := Request{RepoURL: s.URL("app"), SHA: sha, Source: app.Source{RepoURL: s.URL("app"), Path: "app"}}
	say := func(loaded *Loaded) string {
		t.Helper()
		if len(loaded.Objects) != 1 || loaded.Objects[0].GetName() != "shop-greeting" {
			t.Fatalf("loaded %d objects, want ConfigMap shop-greeting", len(loaded.Objects))
		}
		v, _, _ := unstructured.NestedString(loaded.Objects[0].Object, "data", "say")
		return v
	}

	first, err := l.LoadApp(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := say(first); got != "v1" || first.CacheHit || first.RemoteBases != 1 || renders != 1 {
		t.Fatalf("first load: say %q, cache hit %v, remote bases %d, renders %d; want v1, a render with 1 remote base", got, first.CacheHit, first.RemoteBases, renders)
	}
	fetches := repos.FetchCalls(s.URL("base"))

	again, err := l.LoadApp(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !again.CacheHit || again.Digest != first.Digest || again.RemoteBases != 1 || renders != 1 || repos.FetchCalls(s.URL("base")) != fetches {
		t.Fatalf("second load: cache hit %v, same digest %v, remote bases %d, renders %d; want the cached set", again.CacheHit, again.Digest == first.Digest, again.RemoteBases, renders)
	}

	// The tag moves to a new commit of the base.
	base.Commit("base v2", map[string]string{"base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\ndata:\n  say: v2\n"})
	base.Git("tag", "-f", "v1")
	base.Push()
	base.Git("push", "-f", "origin", "v1")
	moved, err := l.LoadApp(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := say(moved); got != "v2" || moved.CacheHit || moved.Digest == first.Digest || renders != 2 {
		t.Fatalf("after the tag moved: say %q, cache hit %v, renders %d; want v2 rendered again", got, moved.CacheHit, renders)
	}
	if k1, k2 := remoteKey("k", []render.RemoteBase{{Repo: "r", Ref: "v1", SHA: "a"}}), remoteKey("k", []render.RemoteBase{{Repo: "r", Ref: "v1", SHA: "b"}}); k1 == k2 {
		t.Fatal("the remote base's commit is not in the key")
	}

	// A base the worker cannot fetch fails the load with its name, and is
	// not remembered: it may appear.
	broken := appRepo.Commit("broken", map[string]string{"app/kustomization.yaml": "resources:\n- " + s.URL("base") + "//base?ref=v9\n"})
	appRepo.Push()
	req.SHA = broken
	_, err = l.LoadApp(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), `resources: fetch the remote base "`+s.URL("base")+`//base?ref=v9"`) || !strings.Contains(err.Error(), "v9") {
		t.Fatalf("load with a missing tag: %v", err)
	}
	base.Git("tag", "v9")
	base.Git("push", "origin", "v9")
	if _, err := l.LoadApp(context.Background(), req); err != nil {
		t.Fatalf("the tag was pushed, and the load still fails: %v", err)
	}
}
