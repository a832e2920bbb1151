package sandbox

import (
	"context"
	"os/exec"
	"testing"

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
