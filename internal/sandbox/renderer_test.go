package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// corpusRoot finds Argo CD's example apps: beside the checkout in CI
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

func testRenderer(t testing.TB, r Runner, limits Limits) *Renderer {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rr := &Renderer{Runner: r, Binary: self, Limits: limits, MemoryFlag: "--render-memory",
		Settings: &render.Renderer{Capabilities: render.Capabilities{APIVersions: []string{"monitoring.coreos.com/v1"}}}}
	// Before the runner's directory goes: the sandboxes end in the
	// background.
	t.Cleanup(func() { _ = rr.Close() })
	return rr
}

// TestRendererRendersAsInProcess renders Argo CD's example apps, and
// sources that fail, in each sandbox and in-process: the objects, source
// types and errors are the same.
func TestRendererRendersAsInProcess(t *testing.T) {
	root := corpusRoot(t)
	sources := []struct {
		app string
		src app.Source
	}{
		{"guestbook", app.Source{Path: "guestbook"}},
		{"sync-waves", app.Source{Path: "sync-waves"}},
		{"helm-hooks", app.Source{Path: "helm-hooks"}},
		{"kustomize-guestbook", app.Source{Path: "kustomize-guestbook", Kustomize: &app.KustomizeSource{
			NamePrefix: "prod-", Namespace: "prod", CommonLabels: map[string]string{"env": "prod"},
			Images: []string{"gcr.io/google-samples/gb-frontend=gcr.io/heptio-images/ks-guestbook-demo:0.2"}}}},
		{"pre-post-sync", app.Source{Path: "pre-post-sync"}},
		{"sock-shop", app.Source{Path: "sock-shop"}},
		{"guestbook-prod", app.Source{Path: "helm-guestbook", Helm: &app.HelmSource{
			ValueFiles:   []string{"values-production.yaml"},
			Parameters:   []app.HelmParameter{{Name: "replicaCount", Value: "3"}, {Name: "image.tag", Value: "v6", ForceString: true}},
			ValuesObject: map[string]any{"service": map[string]any{"port": 8080}}}}},
		{"apps", app.Source{Path: "apps"}},
		// Errors: a path leaving the repository, a missing one, Jsonnet.
		{"outside", app.Source{Path: "../.."}},
		{"missing", app.Source{Path: "no-such-app"}},
		{"bad-values", app.Source{Path: "helm-guestbook", Helm: &app.HelmSource{ValueFiles: []string{"../../etc/passwd"}}}},
	}
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sandboxed := testRenderer(t, r, Limits{})
		for _, s := range sources {
			t.Run(s.app, func(t *testing.T) {
				opts := render.Options{AppName: s.app, Namespace: "demo"}
				want, wantErr := sandboxed.Settings.Render(context.Background(), root, s.src, opts)
				got, err := sandboxed.Render(context.Background(), root, s.src, opts)
				if wantErr != nil {
					if err == nil || err.Error() != wantErr.Error() || render.IsUserError(err) != render.IsUserError(wantErr) {
						t.Fatalf("sandboxed error %v (user error %v), want %v (user error %v)", err, render.IsUserError(err), wantErr, render.IsUserError(wantErr))
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.SourceType != want.SourceType || len(got.Objects) != len(want.Objects) {
					t.Fatalf("sandboxed %s with %d objects, want %s with %d", got.SourceType, len(got.Objects), want.SourceType, len(want.Objects))
				}
				for i := range want.Objects {
					if !reflect.DeepEqual(got.Objects[i].Object, want.Objects[i].Object) {
						t.Errorf("object %d differs:\n got %#v\nwant %#v", i, got.Objects[i].Object, want.Objects[i].Object)
					}
				}
			})
		}
		if sandboxed.Version() != sandboxed.Settings.Version() {
			t.Errorf("Version %q, want the in-process %q", sandboxed.Version(), sandboxed.Settings.Version())
		}
	})
}

// doublingChart is a Helm chart whose template doubles a string until it
// needs 512 MiB.
var doublingChart = map[string]string{
	"Chart.yaml": "apiVersion: v2\nname: bomb\nversion: 0.1.0\n",
	"templates/cm.yaml": `{{- $s := "xxxxxxxx" }}{{- range until 26 }}{{- $s = printf "%s%s" $s $s }}{{- end }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: bomb
data:
  size: "{{ len $s }}"
`,
}

// TestRendererMemoryLimit renders a chart that needs more memory than the
// sandbox has: the render ends as a LimitError naming the limit and the
// flag that raises it, and the process that asked is unharmed.
func TestRendererMemoryLimit(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, filepath.Join(root, "bomb"), doublingChart)
	pid := os.Getpid()
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sandboxed := testRenderer(t, r, Limits{Memory: 256 << 20})
		_, err := sandboxed.Render(context.Background(), root, app.Source{Path: "bomb"}, render.Options{AppName: "bomb"})
		var limit *render.LimitError
		if !errors.As(err, &limit) || limit.What != "memory" || !render.IsUserError(err) {
			t.Fatalf("err = %v, want a memory LimitError", err)
		}
		for _, want := range []string{"render bomb:", "256 MiB", "--render-memory"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		if os.Getpid() != pid {
			t.Fatal("the test process changed")
		}
		// The sandbox still renders what fits.
		if _, err := sandboxed.Render(context.Background(), corpusRoot(t), app.Source{Path: "guestbook"}, render.Options{AppName: "g"}); err != nil {
			t.Fatalf("a render after the bomb: %v", err)
		}
	})
}

// writeFiles writes files (by slash-separated name) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		file := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRendererOutputLimit stops a render whose manifests are larger than
// the sandbox's Limits.Stdout.
func TestRendererOutputLimit(t *testing.T) {
	forEachSandbox(t, func(t *testing.T, r Runner) {
		sandboxed := testRenderer(t, r, Limits{Stdout: 4 << 10})
		_, err := sandboxed.Render(context.Background(), corpusRoot(t), app.Source{Path: "sock-shop"}, render.Options{AppName: "s"})
		var limit *render.LimitError
		if !errors.As(err, &limit) || limit.What != "output size" || !strings.Contains(err.Error(), "larger than 4 KiB") {
			t.Fatalf("err = %v, want an output size LimitError", err)
		}
	})
}
