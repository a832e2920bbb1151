package render

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ferry-gitops/ferry/internal/app"
)

// TestKustomizeBuildsRunAtOnce: a kustomize build of one app does not wait
// for another app's build that is still running (here: one that holds
// its unit of the schema semaphore and does not end).
func TestKustomizeBuildsRunAtOnce(t *testing.T) {
	if err := kustomizeSchema.Acquire(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	held := true
	release := func() {
		if held {
			kustomizeSchema.Release(1)
			held = false
		}
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Render(ctx, "testdata", app.Source{Path: "kustomize-overlay/overlays/prod"}, Options{})
	if err != nil {
		t.Fatalf("a build beside a running one: %v", err)
	}
	if len(res.Objects) == 0 {
		t.Fatal("no objects")
	}

	// A build that sets its own schema runs alone: it waits, and gives up
	// with its caller.
	root := copyTree(t, "testdata")
	writeFile(t, filepath.Join(root, "kustomize", "kustomization.yaml"), "resources:\n  - cm.yaml\nopenapi:\n  version: v1.21.2\n")
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	if _, err := Render(short, root, app.Source{Path: "kustomize"}, Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a build with openapi beside a running one: %v, want it to wait for the schema", err)
	}
	release()
	if _, err := Render(ctx, root, app.Source{Path: "kustomize"}, Options{}); err != nil {
		t.Fatalf("a build with openapi, alone: %v", err)
	}
}

// TestKustomizeConcurrentBuilds: builds at once, some setting a schema of
// their own, give what each gives alone.
func TestKustomizeConcurrentBuilds(t *testing.T) {
	root := copyTree(t, "testdata")
	writeFile(t, filepath.Join(root, "kustomize", "kustomization.yaml"), "resources:\n  - cm.yaml\nopenapi:\n  version: v1.21.2\n")
	sources := []app.Source{{Path: "kustomize-overlay/overlays/prod"}, {Path: "kustomize"}}
	want := make([]string, len(sources))
	for i, src := range sources {
		res, err := Render(context.Background(), root, src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = dump(t, res.Objects)
	}
	var wg sync.WaitGroup
	for n := 0; n < 12; n++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := Render(context.Background(), root, sources[i], Options{})
			if err != nil {
				t.Error(err)
				return
			}
			if got := dump(t, res.Objects); got != want[i] {
				t.Errorf("%s at once with others:\n%s\nwant\n%s", sources[i].Path, got, want[i])
			}
		}(n % 3 / 2) // two default builds to one with a schema
	}
	wg.Wait()
}
