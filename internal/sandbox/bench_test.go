package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// BenchmarkRender renders Argo CD's example apps (a directory, a
// kustomization, a chart) in-process, in a cold sandbox of each mode, and
// in a warm one of a pool (the pool full before each render): what a
// sandbox's start costs a render, and what a pool saves of it.
//
//	go test -run '^$' -bench BenchmarkRender -benchtime 10x ./internal/sandbox/
func BenchmarkRender(b *testing.B) {
	root := corpusRoot(b)
	for _, path := range []string{"guestbook", "sock-shop", "helm-guestbook"} {
		src := app.Source{Path: path}
		opts := render.Options{AppName: path}
		b.Run(path+"/in-process", func(b *testing.B) {
			r := &render.Renderer{}
			for b.Loop() {
				if _, err := r.Render(context.Background(), root, src, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, mode := range []Mode{ModeProcess, ModeGVisor} {
			b.Run(path+"/"+string(mode)+"-pool", func(b *testing.B) {
				tool := map[Mode]string{ModeGVisor: "runsc", ModeProcess: "bwrap"}[mode]
				if _, err := exec.LookPath(tool); err != nil {
					b.Skipf("%s is not installed", tool)
				}
				runner, err := New(mode, b.TempDir(), GVisor{})
				if err != nil {
					b.Fatal(err)
				}
				r := testRenderer(b, runner, Limits{})
				r.Pool, r.PoolDir = 1, b.TempDir()
				defer r.Close()
				for b.Loop() {
					b.StopTimer()
					waitFull(b, r)
					b.StartTimer()
					if _, err := r.Render(context.Background(), root, src, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(path+"/"+string(mode), func(b *testing.B) {
				tool := map[Mode]string{ModeGVisor: "runsc", ModeProcess: "bwrap"}[mode]
				if _, err := exec.LookPath(tool); err != nil {
					b.Skipf("%s is not installed", tool)
				}
				runner, err := New(mode, b.TempDir(), GVisor{})
				if err != nil {
					b.Fatal(err)
				}
				r := testRenderer(b, runner, Limits{})
				for b.Loop() {
					if _, err := r.Render(context.Background(), root, src, opts); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRender1000 renders a directory of 1,000 ConfigMaps, one file
// each (as make bench's sandbox scenario renders 1,000 resources), in-process
// and in a warm sandbox of a pool of each mode (the pool full before each
// render), with the runsc on PATH (FERRY_TOOLS_BIN first: the tools
// cache's). The warm/in-process ratio is reported as x-in-process.
//
//	FERRY_TOOLS_BIN=$(hack/tools.sh) go test -run '^$' -bench BenchmarkRender1000 -benchtime 10x ./internal/sandbox/
func BenchmarkRender1000(b *testing.B) {
	root := b.TempDir()
	for i := range 1000 {
		name := fmt.Sprintf("r%04d", i)
		body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  rev: \"1\"\n  settings.yaml: |\n    log_level: info\n    feature_flags: [a, b, c]\n    upstream: http://backend.internal:8080\n", name)
		if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "app", name+".yaml"), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	src, opts := app.Source{Path: "app"}, render.Options{AppName: "bench", Namespace: "bench"}
	var inProcess time.Duration
	b.Run("in-process", func(b *testing.B) {
		r := &render.Renderer{}
		began := time.Now()
		for b.Loop() {
			if _, err := r.Render(context.Background(), root, src, opts); err != nil {
				b.Fatal(err)
			}
		}
		inProcess = time.Since(began) / time.Duration(b.N)
	})
	for _, mode := range []Mode{ModeGVisor, ModeProcess} {
		b.Run(string(mode)+"-pool", func(b *testing.B) {
			tool := map[Mode]string{ModeGVisor: "runsc", ModeProcess: "bwrap"}[mode]
			if _, err := exec.LookPath(tool); err != nil {
				b.Skipf("%s is not installed", tool)
			}
			runner, err := New(mode, b.TempDir(), GVisor{})
			if err != nil {
				b.Fatal(err)
			}
			r := testRenderer(b, runner, Limits{})
			r.Pool, r.PoolDir = 1, b.TempDir()
			defer r.Close()
			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				waitFull(b, r)
				b.StartTimer()
				began := time.Now()
				res, err := r.Render(context.Background(), root, src, opts)
				total += time.Since(began)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Objects) != 1000 {
					b.Fatalf("rendered %d objects, want 1000", len(res.Objects))
				}
			}
			if inProcess > 0 {
				b.ReportMetric(float64(total/time.Duration(b.N))/float64(inProcess), "x-in-process")
			}
		})
	}
}
