package render

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ferry-gitops/ferry/internal/app"
)

func TestRenderDetectsSourceType(t *testing.T) {
	tests := []struct {
		name     string
		src      app.Source
		wantType string
		want     []string
		wantErr  string
	}{
		{name: "plain directory", src: app.Source{Path: "mixed"}, wantType: SourceTypeDirectory, want: mixedTop},
		{name: "directory options", src: app.Source{Path: "mixed", Directory: &app.DirectorySource{Recurse: true, Include: "sub/*"}},
			wantType: SourceTypeDirectory, want: mixedSub},
		{name: "kustomization.yaml", src: app.Source{Path: "kustomize"}, wantType: SourceTypeKustomize, want: []string{"ConfigMap/cm"}},
		{name: "Chart.yaml", src: app.Source{Path: "helm"}, wantType: SourceTypeHelm, want: []string{}},
		{name: "explicit kustomize", src: app.Source{Path: "kustomize", Kustomize: &app.KustomizeSource{}}, wantType: SourceTypeKustomize, want: []string{"ConfigMap/cm"}},
		{name: "explicit helm", src: app.Source{Path: "helm", Helm: &app.HelmSource{}}, wantType: SourceTypeHelm, want: []string{}},
		{name: "explicit directory excluding the kustomization", src: app.Source{Path: "kustomize", Directory: &app.DirectorySource{Exclude: "kustomization.yaml"}},
			wantType: SourceTypeDirectory, want: []string{"ConfigMap/cm"}},

		{name: "explicit kustomize on a directory", src: app.Source{Path: "mixed", Kustomize: &app.KustomizeSource{}},
			wantErr: "render mixed: spec.source.kustomize is set, but the path holds no kustomization.yaml, kustomization.yml or Kustomization: it is a plain directory"},
		{name: "explicit kustomize on a chart", src: app.Source{Path: "helm", Kustomize: &app.KustomizeSource{}},
			wantErr: "render helm: spec.source.kustomize is set, but the path holds no kustomization.yaml, kustomization.yml or Kustomization: it is a Helm source (found Chart.yaml)"},
		{name: "explicit helm on a kustomization", src: app.Source{Path: "kustomize", Helm: &app.HelmSource{}},
			wantErr: "render kustomize: spec.source.helm is set, but the path holds no Chart.yaml: it is a Kustomize source (found kustomization.yaml)"},
		{name: "explicit directory on a kustomization", src: app.Source{Path: "kustomize", Directory: &app.DirectorySource{}},
			wantErr: "render kustomize: spec.source.directory is set, but the path is a Kustomize source (found kustomization.yaml); remove spec.source.directory"},
		{name: "explicit directory on a chart", src: app.Source{Path: "helm", Directory: &app.DirectorySource{Recurse: true}},
			wantErr: "render helm: spec.source.directory is set, but the path is a Helm source (found Chart.yaml)"},
		{name: "two explicit types", src: app.Source{Path: "mixed", Directory: &app.DirectorySource{}, Helm: &app.HelmSource{}},
			wantErr: "render mixed: spec.source sets more than one of directory, kustomize and helm"},
		{name: "path outside", src: app.Source{Path: "../.."}, wantErr: `must not contain ".."`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Render(context.Background(), "testdata", tc.src, Options{AppName: "demo"})
			if tc.wantErr != "" {
				assertErr(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.SourceType != tc.wantType {
				t.Errorf("SourceType = %q, want %q", res.SourceType, tc.wantType)
			}
			assertNames(t, res.Objects, tc.want)
			var r Renderer
			if typ, err := r.SourceType("testdata", tc.src); err != nil || typ != tc.wantType {
				t.Errorf("Renderer.SourceType = %q, %v; want %q", typ, err, tc.wantType)
			}
		})
	}
}

func TestRenderCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, path := range []string{"mixed", "kustomize-overlay/overlays/prod", "helm-chart"} {
		_, err := Render(ctx, "testdata", app.Source{Path: path}, Options{AppName: "demo"})
		if !errors.Is(err, context.Canceled) || IsUserError(err) {
			t.Fatalf("Render %s with a cancelled context: %v", path, err)
		}
	}
}

// corpusRoot finds the shared example apps: beside the checkout in CI
// (../shared from the repository root), or at /work/shared.
func corpusRoot(t testing.TB) string {
	t.Helper()
	for _, dir := range []string{
		filepath.Join("..", "..", "..", "shared", "corpus", "argocd-example-apps"),
		"/work/shared/corpus/argocd-example-apps",
	} {
		if info, err := os.Stat(dir); err == nil && info.IsDir() {
			return dir
		}
	}
	t.Fatal("argocd-example-apps corpus not found beside the checkout (../shared/corpus) or in /work/shared/corpus")
	return ""
}

// TestRenderExampleApps renders Argo CD's example apps from the shared
// corpus and checks what Argo CD renders for them.
func TestRenderExampleApps(t *testing.T) {
	root := corpusRoot(t)
	tests := []struct {
		app      string // the Application's name
		src      app.Source
		wantType string
		want     []string
		check    func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{app: "guestbook", src: app.Source{Path: "guestbook"}, wantType: SourceTypeDirectory,
			want: []string{"Deployment/guestbook-ui", "Service/guestbook-ui"}},
		{app: "sync-waves", src: app.Source{Path: "sync-waves"}, wantType: SourceTypeDirectory,
			check: func(t *testing.T, objs []*unstructured.Unstructured) { assertCount(t, objs, "", 7) }},
		{app: "helm-hooks", src: app.Source{Path: "helm-hooks"}, wantType: SourceTypeDirectory,
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				assertCount(t, objs, "", 5)
				assertAnnotation(t, find(t, objs, "Job/maint-page-up"), "helm.sh/hook", "pre-install")
			}},
		{app: "kustomize-guestbook", src: app.Source{Path: "kustomize-guestbook"}, wantType: SourceTypeKustomize,
			want: []string{"Deployment/kustomize-guestbook-ui", "Service/kustomize-guestbook-ui"}},
		{app: "kustomize-guestbook", src: app.Source{Path: "kustomize-guestbook", Kustomize: &app.KustomizeSource{
			NamePrefix: "prod-", NameSuffix: "-v2", Namespace: "prod", Images: []string{"gcr.io/google-samples/gb-frontend=gcr.io/heptio-images/ks-guestbook-demo:0.2"},
			CommonLabels: map[string]string{"env": "prod"}, CommonAnnotations: map[string]string{"team": "shop"},
		}}, wantType: SourceTypeKustomize,
			want: []string{"Deployment/prod-guestbook-ui-v2", "Service/prod-guestbook-ui-v2"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				d := find(t, objs, "Deployment/prod-guestbook-ui-v2")
				assertField(t, d, "prod", "metadata", "namespace")
				assertField(t, d, "prod", "metadata", "labels", "env")
				assertField(t, d, "prod", "spec", "selector", "matchLabels", "env")
				assertAnnotation(t, d, "team", "shop")
				containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
				if img := containers[0].(map[string]any)["image"]; img != "gcr.io/heptio-images/ks-guestbook-demo:0.2" {
					t.Errorf("image = %v, want the override", img)
				}
			}},
		{app: "pre-post-sync", src: app.Source{Path: "pre-post-sync"}, wantType: SourceTypeKustomize,
			want: []string{"Job/pre-post-sync-before", "Job/pre-post-sync-after", "Deployment/pre-post-sync-kustomize-guestbook-ui", "Service/pre-post-sync-kustomize-guestbook-ui"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				assertAnnotation(t, find(t, objs, "Job/pre-post-sync-before"), "argocd.argoproj.io/hook", "PreSync")
				assertAnnotation(t, find(t, objs, "Job/pre-post-sync-after"), "argocd.argoproj.io/hook", "PostSync")
			}},
		{app: "sock-shop", src: app.Source{Path: "sock-shop"}, wantType: SourceTypeKustomize,
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				assertCount(t, objs, "", 29)
				assertCount(t, objs, "Deployment", 14)
				assertCount(t, objs, "Service", 14)
				assertCount(t, objs, "Ingress", 1)
			}},
		{app: "helm-guestbook", src: app.Source{Path: "helm-guestbook"}, wantType: SourceTypeHelm,
			want: []string{"Deployment/helm-guestbook", "Service/helm-guestbook"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				// The release is named after the app, and the chart's
				// fullname template drops the chart name it contains.
				assertField(t, find(t, objs, "Service/helm-guestbook"), "ClusterIP", "spec", "type")
				assertField(t, find(t, objs, "Deployment/helm-guestbook"), "helm-guestbook", "metadata", "labels", "release")
			}},
		{app: "guestbook-prod", src: app.Source{Path: "helm-guestbook", Helm: &app.HelmSource{
			ValueFiles: []string{"values-production.yaml"},
			Parameters: []app.HelmParameter{{Name: "replicaCount", Value: "3"}, {Name: "image.tag", Value: "v6", ForceString: true}},
		}}, wantType: SourceTypeHelm,
			want: []string{"Deployment/guestbook-prod-helm-guestbook", "Service/guestbook-prod-helm-guestbook"},
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				assertField(t, find(t, objs, "Service/guestbook-prod-helm-guestbook"), "LoadBalancer", "spec", "type")
				d := find(t, objs, "Deployment/guestbook-prod-helm-guestbook")
				if n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); n != 3 {
					t.Errorf("replicas = %d, want 3 from the parameter", n)
				}
			}},
		{app: "apps", src: app.Source{Path: "apps"}, wantType: SourceTypeHelm,
			check: func(t *testing.T, objs []*unstructured.Unstructured) {
				assertCount(t, objs, "Application", 14)
				a := find(t, objs, "Application/example.helm-guestbook")
				assertField(t, a, "helm-guestbook", "spec", "source", "path")
				assertField(t, a, "helm-guestbook", "spec", "source", "helm", "releaseName")
				assertField(t, a, "https://github.com/argoproj/argocd-example-apps", "spec", "source", "repoURL")
				assertField(t, a, "argocd", "metadata", "namespace")
				assertField(t, find(t, objs, "Application/example.plugin-nix"), "plugins/nix", "spec", "source", "path")
			}},
	}
	for _, tc := range tests {
		t.Run(tc.app+"/"+tc.src.Path, func(t *testing.T) {
			res, err := Render(context.Background(), root, tc.src, Options{AppName: tc.app, Namespace: "demo"})
			if err != nil {
				t.Fatal(err)
			}
			if res.SourceType != tc.wantType {
				t.Errorf("SourceType = %q, want %q", res.SourceType, tc.wantType)
			}
			if tc.want != nil {
				assertNames(t, res.Objects, tc.want)
			}
			if tc.check != nil {
				tc.check(t, res.Objects)
			}
			again, err := Render(context.Background(), root, tc.src, Options{AppName: tc.app, Namespace: "demo"})
			if err != nil {
				t.Fatalf("second render: %v", err)
			}
			if a, b := dump(t, res.Objects), dump(t, again.Objects); a != b {
				t.Fatalf("two renders differ:\n%s\n---\n%s", a, b)
			}
		})
	}
}
