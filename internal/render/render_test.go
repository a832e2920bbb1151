package render

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
		{name: "kustomization.yaml", src: app.Source{Path: "kustomize"},
			wantErr: "render kustomize: Kustomize sources are not supported yet (found kustomization.yaml)"},
		{name: "Chart.yaml", src: app.Source{Path: "helm"},
			wantErr: "render helm: Helm sources are not supported yet (found Chart.yaml)"},
		{name: "explicit kustomize", src: app.Source{Path: "mixed", Kustomize: &app.KustomizeSource{}},
			wantErr: "render mixed: Kustomize sources are not supported yet (spec.source sets it)"},
		{name: "explicit helm", src: app.Source{Path: "mixed", Helm: &app.HelmSource{}},
			wantErr: "render mixed: Helm sources are not supported yet"},
		{name: "explicit directory wins over kustomization.yaml", src: app.Source{Path: "kustomize", Directory: &app.DirectorySource{Exclude: "kustomization.yaml"}},
			wantType: SourceTypeDirectory, want: []string{"ConfigMap/cm"}},
		{name: "two explicit types", src: app.Source{Path: "mixed", Directory: &app.DirectorySource{}, Helm: &app.HelmSource{}},
			wantErr: "render mixed: spec.source sets more than one of directory, kustomize and helm"},
		{name: "path outside", src: app.Source{Path: "../.."}, wantErr: `must not contain ".."`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Render(context.Background(), "testdata", tc.src)
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
		})
	}
}

func TestRenderCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Render(ctx, "testdata", app.Source{Path: "mixed"})
	if !errors.Is(err, context.Canceled) || IsUserError(err) {
		t.Fatalf("Render with a cancelled context: %v", err)
	}
}

// corpusRoot finds the shared example apps: beside the checkout in CI
// (../shared from the repository root), or at /work/shared.
func corpusRoot(t *testing.T) string {
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

func TestRenderExampleApps(t *testing.T) {
	root := corpusRoot(t)
	tests := []struct {
		path     string
		wantType string
		want     []string
		wantN    int
		wantErr  string
	}{
		{path: "guestbook", wantType: SourceTypeDirectory, want: []string{"Deployment/guestbook-ui", "Service/guestbook-ui"}},
		{path: "sync-waves", wantType: SourceTypeDirectory, wantN: 7},
		{path: "helm-hooks", wantType: SourceTypeDirectory, wantN: 5},
		{path: "sock-shop/base", wantType: SourceTypeDirectory, wantN: 29},
		{path: "kustomize-guestbook", wantErr: "render kustomize-guestbook: Kustomize sources are not supported yet (found kustomization.yaml)"},
		{path: "helm-guestbook", wantErr: "render helm-guestbook: Helm sources are not supported yet (found Chart.yaml)"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			res, err := Render(context.Background(), root, app.Source{Path: tc.path})
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
			if tc.want != nil {
				assertNames(t, res.Objects, tc.want)
			} else if len(res.Objects) != tc.wantN {
				t.Errorf("%d objects, want %d (one per top-level kind: in the files)", len(res.Objects), tc.wantN)
			}
			again, err := Render(context.Background(), root, app.Source{Path: tc.path})
			if err != nil || len(again.Objects) != len(res.Objects) {
				t.Fatalf("second render: %v", err)
			}
			for i := range res.Objects {
				if names(res.Objects)[i] != names(again.Objects)[i] {
					t.Fatalf("render order differs at %d", i)
				}
			}
		})
	}
}
