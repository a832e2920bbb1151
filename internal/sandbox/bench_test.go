package sandbox

import (
	"context"
	"os/exec"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// BenchmarkRender renders Argo CD's guestbook in-process and in a cold
// sandbox of each mode: the cost of a sandbox's start.
//
//	go test -run '^$' -bench BenchmarkRender -benchtime 10x ./internal/sandbox/
func BenchmarkRender(b *testing.B) {
	root := corpusRoot(b)
	src := app.Source{Path: "guestbook"}
	opts := render.Options{AppName: "guestbook"}
	b.Run("in-process", func(b *testing.B) {
		r := &render.Renderer{}
		for b.Loop() {
			if _, err := r.Render(context.Background(), root, src, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range []Mode{ModeProcess, ModeGVisor} {
		b.Run(string(mode), func(b *testing.B) {
			tool := map[Mode]string{ModeGVisor: "runsc", ModeProcess: "bwrap"}[mode]
			if _, err := exec.LookPath(tool); err != nil {
				b.Skipf("%s is not installed", tool)
			}
			runner, err := New(mode, b.TempDir())
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
