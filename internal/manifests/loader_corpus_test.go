package manifests

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
	"github.com/ferry-gitops/ferry/internal/render"
)

// corpusApp is one of Argo CD's example apps, as an Application would
// point at it, and what Argo CD renders for it.
type corpusApp struct {
	name  string
	src   app.Source
	typ   string
	check func(t *testing.T, objs []*unstructured.Unstructured)
}

var corpusApps = []corpusApp{
	{name: "kustomize-guestbook", src: app.Source{Path: "kustomize-guestbook"}, typ: render.SourceTypeKustomize,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			want(t, objs, "Deployment/kustomize-guestbook-ui", "Service/kustomize-guestbook-ui")
		}},
	{name: "kustomize-guestbook-prod", src: app.Source{Path: "kustomize-guestbook", Kustomize: &app.KustomizeSource{
		NamePrefix: "prod-", CommonLabels: map[string]string{"env": "prod"}}}, typ: render.SourceTypeKustomize,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			want(t, objs, "Deployment/prod-guestbook-ui", "Service/prod-guestbook-ui")
			for _, o := range objs {
				if o.GetLabels()["env"] != "prod" {
					t.Errorf("%s has labels %v", o.GetName(), o.GetLabels())
				}
			}
		}},
	{name: "helm-guestbook", src: app.Source{Path: "helm-guestbook", Helm: &app.HelmSource{
		ValueFiles: []string{"values-production.yaml"}, Parameters: []app.HelmParameter{{Name: "replicaCount", Value: "2"}}}},
		typ: render.SourceTypeHelm,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			want(t, objs, "Service/helm-guestbook", "Deployment/helm-guestbook")
			for _, o := range objs {
				switch o.GetKind() {
				case "Service":
					if typ, _, _ := unstructured.NestedString(o.Object, "spec", "type"); typ != "LoadBalancer" {
						t.Errorf("Service type %q, want LoadBalancer from values-production.yaml", typ)
					}
				case "Deployment":
					if n, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); n != 2 {
						t.Errorf("replicas %d, want 2", n)
					}
				}
			}
		}},
	{name: "sock-shop", src: app.Source{Path: "sock-shop"}, typ: render.SourceTypeKustomize,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			if n := countKind(objs, "Deployment"); n != 14 || len(objs) != 29 {
				t.Errorf("%d Deployments in %d objects, want 14 in 29", n, len(objs))
			}
		}},
	{name: "pre-post-sync", src: app.Source{Path: "pre-post-sync"}, typ: render.SourceTypeKustomize,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			want(t, objs, "Job/pre-post-sync-before", "Job/pre-post-sync-after", "Deployment/pre-post-sync-kustomize-guestbook-ui")
		}},
	{name: "helm-hooks", src: app.Source{Path: "helm-hooks"}, typ: render.SourceTypeDirectory,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			hooks := 0
			for _, o := range objs {
				if o.GetAnnotations()["helm.sh/hook"] != "" {
					hooks++
				}
			}
			if hooks != 3 || len(objs) != 5 {
				t.Errorf("%d hooks in %d objects, want 3 in 5", hooks, len(objs))
			}
		}},
	{name: "apps", src: app.Source{Path: "apps"}, typ: render.SourceTypeHelm,
		check: func(t *testing.T, objs []*unstructured.Unstructured) {
			if n := countKind(objs, "Application"); n != 14 {
				t.Errorf("%d Applications, want 14", n)
			}
			want(t, objs, "Application/example.guestbook", "Application/example.sock-shop")
		}},
}

// TestLoaderCorpusFromGit renders Argo CD's example apps from a real Git
// server through gitsource: what Argo CD renders, the same digest from a
// second worker without the cache, and a new commit rendered once per
// distinct (path, options) however many Applications track it.
func TestLoaderCorpusFromGit(t *testing.T) {
	s := gittest.NewServer(t)
	w := s.NewRepo(t, "examples")
	w.CopyDir(corpusDir(t), ".")
	w.Commit("Argo CD's example apps", nil)
	w.Push()
	url := s.URL("examples")

	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sha, err := repos.Resolve(ctx, url, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	control := &Loader{Repos: repos, Cache: NewMemory(0, 0)}
	region := &Loader{Repos: repos} // another worker, no shared cache
	digests := map[string]string{}
	for _, ca := range corpusApps {
		t.Run(ca.name, func(t *testing.T) {
			req := Request{RepoURL: url, SHA: sha, Source: ca.src, App: ca.name, Namespace: "demo"}
			got, err := control.LoadApp(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got.SourceType != ca.typ {
				t.Errorf("source type %s, want %s", got.SourceType, ca.typ)
			}
			ca.check(t, got.Objects)
			hit, err := control.LoadApp(ctx, req)
			if err != nil || !hit.CacheHit || hit.Digest != got.Digest {
				t.Fatalf("second load: %+v, %v", hit, err)
			}
			other, err := region.LoadApp(ctx, req)
			if err != nil || other.Digest != got.Digest {
				t.Fatalf("another worker rendered digest %v (%v), want %s", other, err, got.Digest)
			}
			digests[ca.name] = got.Digest
		})
	}

	// A new commit: 50 Applications over 5 distinct (path, options) render 5
	// sets, whatever order and concurrency they come in.
	next := w.Commit("touch", map[string]string{"README.md": "examples\n"})
	w.Push()
	var renders atomic.Int64
	var r render.Renderer
	counting := &Loader{Repos: repos, Cache: NewMemory(0, 0), RendererVersion: r.Version(),
		Render: func(ctx context.Context, root string, src app.Source, opts render.Options) (*render.Result, error) {
			renders.Add(1)
			return r.Render(ctx, root, src, opts)
		}}
	distinct := []app.Source{corpusApps[0].src, corpusApps[1].src, corpusApps[3].src, corpusApps[4].src, corpusApps[5].src}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := distinct[i%len(distinct)]
			if _, err := counting.LoadApp(ctx, Request{RepoURL: url, SHA: next, Source: src, App: "app" + string(rune('a'+i%26)), Namespace: "demo"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := renders.Load(); n != int64(len(distinct)) {
		t.Errorf("%d renders for 50 apps over %d distinct sources, want %d", n, len(distinct), len(distinct))
	}
}

func want(t *testing.T, objs []*unstructured.Unstructured, kindNames ...string) {
	t.Helper()
	have := map[string]bool{}
	for _, o := range objs {
		have[o.GetKind()+"/"+o.GetName()] = true
	}
	for _, kn := range kindNames {
		if !have[kn] {
			t.Errorf("no %s among %s", kn, kinds(objs))
		}
	}
}

func countKind(objs []*unstructured.Unstructured, kind string) int {
	n := 0
	for _, o := range objs {
		if o.GetKind() == kind {
			n++
		}
	}
	return n
}

// corpusDir finds Argo CD's example apps: beside the checkout in CI
// (../shared from the repository root), or at /work/shared.
func corpusDir(t testing.TB) string {
	t.Helper()
	for _, dir := range []string{"../../../shared/corpus/argocd-example-apps", "/work/shared/corpus/argocd-example-apps"} {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			return dir
		}
	}
	t.Fatal("argocd-example-apps corpus not found beside the checkout (../shared/corpus) or in /work/shared/corpus")
	return ""
}
