package manifests

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestLoaderHard: a hard load renders although the cache holds the commit,
// and the fresh set replaces the cached one, so that what a render depends
// on besides the commit (here a value outside the repository, as an
// unpinned remote base would be) shows up.
func TestLoaderHard(t *testing.T) {
	l, _, r := newTestLoader(NewMemory(0, time.Hour))
	outside := "v1"
	counted := l.Render
	l.Render = func(ctx context.Context, root string, src app.Source, opts render.Options) (*render.Result, error) {
		res, err := counted(ctx, root, src, opts)
		if err == nil {
			cm := &unstructured.Unstructured{}
			cm.SetAPIVersion("v1")
			cm.SetKind("ConfigMap")
			cm.SetName("outside-" + outside)
			res.Objects = append(res.Objects, cm)
		}
		return res, err
	}
	load := func(hard bool) *Loaded {
		t.Helper()
		got, err := l.LoadApp(context.Background(), Request{RepoURL: testRepo, SHA: testSHA, Source: appSource, Hard: hard})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := load(false)
	outside = "v2"
	cached := load(false)
	if !cached.CacheHit || cached.Digest != first.Digest || r.calls.Load() != 1 {
		t.Fatalf("a load from the cache: hit=%v, same digest %v, renders %d", cached.CacheHit, cached.Digest == first.Digest, r.calls.Load())
	}
	hard := load(true)
	if hard.CacheHit || hard.Digest == first.Digest || r.calls.Load() != 2 || !hasObject(hard, "ConfigMap/outside-v2") {
		t.Fatalf("a hard load: hit=%v, new digest %v, renders %d, objects %q", hard.CacheHit, hard.Digest != first.Digest, r.calls.Load(), kinds(hard.Objects))
	}
	after := load(false)
	if !after.CacheHit || after.Digest != hard.Digest || r.calls.Load() != 2 {
		t.Fatalf("the load after a hard one: hit=%v, its digest %v, renders %d", after.CacheHit, after.Digest == hard.Digest, r.calls.Load())
	}
}

func hasObject(l *Loaded, kindName string) bool {
	for _, o := range l.Objects {
		if o.GetKind()+"/"+o.GetName() == kindName {
			return true
		}
	}
	return false
}
