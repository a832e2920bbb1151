package sandbox

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// warmArg, after RenderArg in a pooled sandbox's command, has its renderer
// render a small source of its own while it waits for its request (warmUp):
// under gVisor, the first use of the renderer's code and of fresh memory
// costs a fault into the Sentry per page (and a read on the host for the
// binary's pages), which a render in a pooled sandbox then no longer pays.
// A sandbox started for its render skips it: it would only delay the
// render. An argument, not a variable: the sandbox's environment holds
// only what its commands need, nothing named like the worker's.
const warmArg = "warm"

// warmFiles are the warm-up's checkout: a directory of manifests as most
// sources are, with a kustomization above them.
var warmFiles = map[string]string{
	"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: warm\n  labels:\n    app: warm\ndata:\n  key: value\n" +
		"---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: warm\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: warm\n" +
		"  template:\n    metadata:\n      labels:\n        app: warm\n    spec:\n      containers:\n      - name: warm\n        image: warm:1\n",
	"app/svc.json":                 `{"apiVersion":"v1","kind":"Service","metadata":{"name":"warm"},"spec":{"ports":[{"port":80}]}}`,
	"kustomize/kustomization.yaml": "resources:\n- cm.yaml\nnamePrefix: warm-\n",
	"kustomize/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: warm\ndata:\n  key: value\n",
}

// warmUp renders warmFiles as Serve would: the directory source from
// memory, the kustomization from a directory under /tmp, which it removes
// afterwards; it encodes the answers as Serve does. Errors are ignored
// (the real render reports its own).
func warmUp(ctx context.Context) {
	dir, err := os.MkdirTemp("", "ferry-warm-")
	if err != nil {
		return
	}
	defer os.RemoveAll(dir)
	for name, content := range warmFiles {
		file := filepath.Join(dir, name)
		if os.MkdirAll(filepath.Dir(file), 0o755) != nil || os.WriteFile(file, []byte(content), 0o644) != nil {
			return
		}
	}
	files := render.NewFiles(dir)
	for _, name := range []string{"app", "app/cm.yaml", "app/svc.json"} {
		mode, data := fs.FileMode(0o444), []byte(warmFiles[name])
		if name == "app" {
			mode, data = fs.ModeDir|0o555, nil
		}
		if files.Add(name, mode, data, "") != nil {
			return
		}
	}
	for _, path := range []string{"app", "kustomize"} {
		req := request{Root: dir, Source: app.Source{Path: path}, Options: render.Options{AppName: "warm", Namespace: "warm"}}
		var in *render.Files
		if inMemory(req, files) {
			in = files
		}
		resp, objs := renderResponse(ctx, req, in)
		_ = writeResponse(io.Discard, req, resp, objs)
		if resp.Error != nil {
			fmt.Fprintln(os.Stderr, "render sandbox: warm-up:", resp.Error.Text)
		}
	}
}

// warmHeap is how much heap a pooled renderer faults in before it waits
// (faultInHeap): about what a render of 1,000 small manifests allocates
// between two collections at renderGCPercent; at most an eighth of the
// sandbox's memory.
const warmHeap = 48 << 20

// heapPrefix, with the bytes to fault in, is the argument after warmArg.
const heapPrefix = "heap="

// heapArg is the argument that has a pooled renderer of a sandbox of
// memory bytes fault in its heap.
func heapArg(memory int64) string {
	return heapPrefix + strconv.FormatInt(min(warmHeap, memory/8), 10)
}

// faultInHeap touches the bytes of heap args' heapArg names and frees
// them again, with the collector off until the request (Serve turns it
// back on), so that the runtime keeps the pages rather than return them
// to the system: the render
// then allocates from memory gVisor has already mapped, where fresh heap
// costs a fault into the Sentry per page. BenchmarkRender1000's warm
// gVisor render, taking turns with and without (8 renders each, three
// rounds, load 2): 80-86 ms against 91-105 ms. The pages count against
// the sandbox's memory like the render's own heap, which reuses them.
func faultInHeap(args []string) {
	var size int64
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, heapPrefix); ok {
			size, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if size <= 0 {
		return
	}
	chunks := make([][]byte, (size+1<<20-1)>>20)
	for i := range chunks {
		chunks[i] = make([]byte, 1<<20)
		for j := 0; j < len(chunks[i]); j += os.Getpagesize() {
			chunks[i][j] = 1
		}
	}
	debug.SetGCPercent(-1)
	chunks = nil
	runtime.GC()
}
