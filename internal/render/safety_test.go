package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
)

func TestRunBounded(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := func(context.Context) (int, error) { <-release; return 1, nil }

	start := time.Now()
	_, err := runBounded(context.Background(), Limits{Timeout: 50 * time.Millisecond, Flags: LimitFlags{Timeout: "--render-timeout"}}, "app", slow)
	var limit *LimitError
	if !errors.As(err, &limit) || limit.What != "render time" || !IsUserError(err) {
		t.Fatalf("timeout: %v", err)
	}
	if !strings.Contains(err.Error(), "render app: gave up after 50ms") || !strings.Contains(err.Error(), "raise it with --render-timeout") {
		t.Errorf("message: %v", err)
	}
	if time.Since(start) > time.Second {
		t.Errorf("gave up after %s", time.Since(start))
	}
	if AbandonedRenders() < 1 {
		t.Errorf("AbandonedRenders = %d, want the abandoned one counted", AbandonedRenders())
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := runBounded(ctx, Limits{Timeout: time.Minute}, "app", slow); !errors.Is(err, context.Canceled) || IsUserError(err) {
		t.Fatalf("cancelled caller: %v", err)
	}

	if v, err := runBounded(context.Background(), Limits{Timeout: time.Second}, "app", func(context.Context) (int, error) { return 7, nil }); v != 7 || err != nil {
		t.Fatalf("quick fn: %v, %v", v, err)
	}
}

func TestRenderTimeLimit(t *testing.T) {
	root := copyTree(t, "testdata")
	// About a second of template work: well past the limit.
	writeFile(t, filepath.Join(root, "helm-chart", "templates", "slow.yaml"), "{{- range until 3000000 }}{{ end }}\n")
	r := &Renderer{Limits: Limits{Timeout: 20 * time.Millisecond}}
	start := time.Now()
	_, err := r.Render(context.Background(), root, app.Source{Path: "helm-chart"}, Options{AppName: "app"})
	assertErr(t, err, "render helm-chart: gave up after 20ms")
	if time.Since(start) > 500*time.Millisecond {
		t.Errorf("Render returned after %s, want soon after the 20ms limit", time.Since(start))
	}
}

func TestRenderLimits(t *testing.T) {
	tests := []struct {
		name    string
		path    string
		limits  Limits
		wantErr string
	}{
		{"chart files", "helm-chart", Limits{MaxFiles: 5}, "render helm-chart: more than 5 files"},
		{"chart file size", "helm-chart", Limits{MaxFileBytes: 200}, "file larger than the 200 bytes limit"},
		{"chart total size", "helm-chart", Limits{MaxTotalBytes: 1000}, "render helm-chart: manifest files add up to more than 1000 bytes"},
		{"kustomize file size", "kustomize-overlay/overlays/prod", Limits{MaxFileBytes: 200}, "file larger than the 200 bytes limit"},
		{"kustomize files", "kustomize-overlay/overlays/prod", Limits{MaxFiles: 3}, "render kustomize-overlay/overlays/prod: more than 3 files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Renderer{Limits: tc.limits}
			_, err := r.Render(context.Background(), "testdata", app.Source{Path: tc.path}, Options{AppName: "app"})
			assertErr(t, err, tc.wantErr)
			var limit *LimitError
			if !errors.As(err, &limit) {
				t.Fatalf("error %T, want *LimitError", err)
			}
		})
	}
}

func TestResolveInRepo(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(root, "app", "v.yaml"), "a: 1\n")
	writeFile(t, filepath.Join(root, "shared", "v.yaml"), "a: 2\n")
	writeFile(t, filepath.Join(outside, "x.yaml"), "a: 3\n")
	symlink(t, filepath.Join(outside, "x.yaml"), filepath.Join(root, "app", "out.yaml"))
	symlink(t, outside, filepath.Join(root, "app", "outdir"))
	symlink(t, "../shared/v.yaml", filepath.Join(root, "app", "in.yaml"))
	base := filepath.Join(root, "app")
	tests := []struct{ rel, want, wantErr string }{
		{"v.yaml", "app/v.yaml", ""},
		{"./sub/../v.yaml", "app/v.yaml", ""},
		{"../shared/v.yaml", "shared/v.yaml", ""},
		{"in.yaml", "shared/v.yaml", ""},
		{"../..", "", "leaves the repository"},
		{"../../x.yaml", "", "leaves the repository"},
		{"/etc/passwd", "", "is absolute"},
		{"out.yaml", "", "is a symlink leading outside the repository"},
		{"outdir/x.yaml", "", "is a symlink leading outside the repository"},
		{"missing.yaml", "", "no such file in the repository"},
		{"", "", "is empty"},
	}
	for _, tc := range tests {
		real, _, err := resolveInRepo(root, base, tc.rel, "f")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !IsUserError(err) {
				t.Errorf("resolveInRepo(%q) = %q, %v; want an error containing %q", tc.rel, real, err, tc.wantErr)
			}
			continue
		}
		if err != nil || real != filepath.Join(root, filepath.FromSlash(tc.want)) {
			t.Errorf("resolveInRepo(%q) = %q, %v; want %s", tc.rel, real, err, tc.want)
		}
	}
}

// TestRenderTimeCoversChartLoading: a chart whose directories link to the
// next level twice over (2^20 paths to walk, with no loop and no file to
// count) fails on the render time limit, because the limit covers loading
// the chart, not only its templates; without that the walk would finish
// long after the limit and the render succeed.
func TestRenderTimeCoversChartLoading(t *testing.T) {
	root := t.TempDir()
	chart := filepath.Join(root, "chart")
	writeFile(t, filepath.Join(chart, "Chart.yaml"), "apiVersion: v2\nname: links\nversion: 0.1.0\n")
	writeFile(t, filepath.Join(chart, "templates", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")
	const depth = 20
	for i := 0; i < depth; i++ {
		dir := filepath.Join(chart, "l", fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if i+1 < depth {
			next := filepath.Join("..", fmt.Sprint(i+1))
			symlink(t, next, filepath.Join(dir, "a"))
			symlink(t, next, filepath.Join(dir, "b"))
		}
	}
	before := AbandonedRenders()
	r := &Renderer{Limits: Limits{Timeout: 200 * time.Millisecond, Flags: LimitFlags{Timeout: "--render-timeout"}}}
	_, err := r.Render(context.Background(), root, app.Source{Path: "chart"}, Options{AppName: "app"})
	assertLimit(t, err, "render time", "render chart: gave up after 200ms", "--render-timeout")
	// The walk stops with the render it belongs to.
	deadline := time.Now().Add(time.Minute)
	for AbandonedRenders() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := AbandonedRenders(); n > before {
		t.Errorf("AbandonedRenders = %d after a minute, want %d: the chart walk went on after the render gave up", n, before)
	}
}
