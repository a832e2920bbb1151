package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

// Every source type is bounded by the same output limits, after it renders.
func TestRenderOutputLimits(t *testing.T) {
	flags := LimitFlags{Objects: "--render-max-objects", RenderedBytes: "--render-max-size"}
	sources := []struct {
		name string
		src  app.Source
	}{
		{"directory", app.Source{Path: "mixed"}},
		{"kustomize", app.Source{Path: "kustomize-overlay/overlays/prod"}},
		{"helm", app.Source{Path: "helm-chart"}},
		{"jsonnet", app.Source{Path: "jsonnet-list"}},
	}
	for _, s := range sources {
		t.Run(s.name, func(t *testing.T) {
			res, err := (&Renderer{}).Render(context.Background(), "testdata", s.src, Options{AppName: "app"})
			if err != nil {
				t.Fatal(err)
			}
			n := len(res.Objects)
			if n < 2 {
				t.Fatalf("the fixture renders %d objects; the test needs at least 2", n)
			}
			var size int64
			for _, o := range res.Objects {
				b, _ := json.Marshal(o.Object)
				size += int64(len(b))
			}

			// Exactly at the limits: renders.
			at := &Renderer{Limits: Limits{MaxObjects: n, MaxRenderedBytes: size, Flags: flags}}
			if _, err := at.Render(context.Background(), "testdata", s.src, Options{AppName: "app"}); err != nil {
				t.Fatalf("at the limits (%d objects, %d bytes): %v", n, size, err)
			}

			objects := &Renderer{Limits: Limits{MaxObjects: n - 1, Flags: flags}}
			_, err = objects.Render(context.Background(), "testdata", s.src, Options{AppName: "app"})
			assertLimit(t, err, "objects", fmt.Sprintf("more than %d objects", n-1), "--render-max-objects")

			bytes := &Renderer{Limits: Limits{MaxRenderedBytes: size / 2, Flags: flags}}
			_, err = bytes.Render(context.Background(), "testdata", s.src, Options{AppName: "app"})
			assertLimit(t, err, "rendered size", "the rendered objects take more than", "--render-max-size")
		})
	}
}

func assertLimit(t *testing.T, err error, what, msg, flag string) {
	t.Helper()
	var limit *LimitError
	if !errors.As(err, &limit) || limit.What != what || !IsUserError(err) {
		t.Fatalf("err = %v, want a %q LimitError", err, what)
	}
	if !strings.Contains(err.Error(), msg) || !strings.Contains(err.Error(), "raise it with "+flag) {
		t.Errorf("message %q: want %q and the flag %s", err, msg, flag)
	}
}

// jsonSize counts what encoding/json writes.
func TestJSONSize(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "y\"z\\\n\t\x01é"}},
		"data":     map[string]any{"n": int64(12345), "f": 1.5, "b": true, "nil": nil, "list": []any{"a", int64(-1), false}},
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	got, want := jsonSize(obj, 1<<30), int64(len(b))
	if got != want {
		t.Errorf("jsonSize = %d, encoding/json writes %d", got, want)
	}
	if got := jsonSize(obj, 10); got <= 10 {
		t.Errorf("jsonSize past a budget of 10 = %d, want more than the budget", got)
	}
}
