package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/gitsource"
	"github.com/ferry-gitops/ferry/internal/gitsource/gittest"
	"github.com/ferry-gitops/ferry/internal/render"
)

// TestRendererRemoteBases: a kustomization naming a base in another
// repository renders in each sandbox, which has no network, from the
// checkout the worker fetched and mounted, as it renders in-process; a
// renderer with a warm pool renders it too.
func TestRendererRemoteBases(t *testing.T) {
	s := gittest.NewServer(t)
	w := s.NewRepo(t, "base")
	w.Commit("base", map[string]string{
		"deploy/kustomization.yaml": "resources:\n- cm.yaml\n",
		"deploy/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: remote\n",
	})
	w.Push()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	kust := "namePrefix: app-\nresources:\n- " + s.URL("base") + "//deploy?ref=main\n"
	if err := os.WriteFile(filepath.Join(root, "app", "kustomization.yaml"), []byte(kust), 0o644); err != nil {
		t.Fatal(err)
	}
	repos, err := gitsource.New(gitsource.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	src := app.Source{Path: "app"}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		for _, pool := range []int{0, 1} {
			sandboxed := testRenderer(t, r, Limits{})
			sandboxed.Settings.AllowRemoteBases = true
			sandboxed.Pool = pool
			t.Cleanup(func() { _ = sandboxed.Close() })
			bases, err := sandboxed.FetchRemoteBases(context.Background(), root, src, render.Options{}, func(ctx context.Context, ref render.RemoteRef) (render.RemoteBase, error) {
				sha, err := repos.Resolve(ctx, ref.Repo, ref.Ref)
				if err != nil {
					return render.RemoteBase{}, err
				}
				dir, release, err := repos.Checkout(ctx, ref.Repo, sha)
				if err != nil {
					return render.RemoteBase{}, err
				}
				t.Cleanup(release)
				return render.RemoteBase{Repo: ref.Repo, Ref: ref.Ref, SHA: sha, Dir: dir}, nil
			})
			if err != nil || len(bases) != 1 {
				t.Fatalf("fetch: %v, %v", bases, err)
			}
			opts := render.Options{RemoteBases: bases}
			got, err := sandboxed.Render(context.Background(), root, src, opts)
			if err != nil {
				t.Fatalf("pool %d: %v", pool, err)
			}
			want, err := sandboxed.Settings.Render(context.Background(), root, src, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Objects) != 1 || got.Objects[0].GetName() != "app-remote" || len(want.Objects) != 1 || want.Objects[0].GetName() != "app-remote" {
				t.Fatalf("pool %d: sandboxed %v, in-process %v; want ConfigMap app-remote", pool, got.Objects, want.Objects)
			}
			if bases[0].Dir == RemoteDir+"/0" {
				t.Fatal("the render changed the caller's options")
			}
		}
	})
}
