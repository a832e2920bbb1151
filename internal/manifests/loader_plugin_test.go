package manifests

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestLoaderDiscoveredPluginRendersPerApp: a source with no section that
// only the render finds to be a plugin's (find.command discovery runs in
// the sandbox, not in SourceType) is kept per app: each app gets the set
// rendered for it, from the cache on the next load.
func TestLoaderDiscoveredPluginRendersPerApp(t *testing.T) {
	renders := 0
	l := &Loader{Repos: &fakeRepos{}, Cache: NewMemory(0, 0), RendererVersion: "v",
		Render: func(_ context.Context, _ string, _ app.Source, opts render.Options) (*render.Result, error) {
			renders++
			cm := &unstructured.Unstructured{}
			cm.SetAPIVersion("v1")
			cm.SetKind("ConfigMap")
			cm.SetName(opts.AppName)
			return &render.Result{Objects: []*unstructured.Unstructured{cm}, SourceType: render.SourceTypePlugin}, nil
		}}
	src := app.Source{RepoURL: testRepo, Path: "app"}
	for round := range 2 {
		for _, name := range []string{"one", "two"} {
			got, err := l.LoadApp(context.Background(), Request{RepoURL: testRepo, SHA: testSHA, Source: src, App: name, Namespace: "ns"})
			if err != nil {
				t.Fatal(err)
			}
			if got.Objects[0].GetName() != name || got.CacheHit != (round == 1) {
				t.Errorf("round %d, app %s: got ConfigMap %s (cache hit %t)", round, name, got.Objects[0].GetName(), got.CacheHit)
			}
		}
	}
	if renders != 2 {
		t.Errorf("%d renders, want one per app", renders)
	}
}
