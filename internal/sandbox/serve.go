package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"

	"github.com/ferry-gitops/ferry/internal/render"
	"github.com/ferry-gitops/ferry/internal/sopsfile"
)

// readyLine is what a pooled renderer writes once warm, before it reads
// its request (Spec.ReadyLine).
const readyLine = "ready\n"

// renderGCPercent is the renderer's GOGC during its render, under the
// memory limit (Serve).
const renderGCPercent = 400

// maxRequest bounds the request a renderer process reads: a source spec
// with its Helm values.
const maxRequest = 16 << 20

// Serve is the renderer process, the worker's binary in its render mode:
// it reads a request from in, renders it with package render, and writes
// the objects or the typed error to out, one line; then the next request,
// of the same checkout (request.Again), until in ends. args are the
// process's arguments after RenderArg (warmArg: warm up, fault in the
// heap of heapArg, then write readyLine). It returns an error only when a
// request cannot be read or an answer written; a render error is an
// answer.
func Serve(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	if slices.Contains(args, warmArg) {
		warmUp(ctx)
		faultInHeap(args)
		// The pool hands the sandbox out from now on (Spec.ReadyLine).
		if _, err := io.WriteString(out, readyLine); err != nil {
			return fmt.Errorf("write the ready line: %w", err)
		}
	}
	// Large reads: the checkout's archive follows the first request.
	br := bufio.NewReaderSize(in, 1<<20)
	var co checkout
	for first := true; ; first = false {
		body, err := readRequestLine(br)
		if err != nil {
			return fmt.Errorf("read the render request: %w", err)
		}
		if !first && len(body) == 0 {
			// The worker is done with this sandbox.
			return nil
		}
		var req request
		if err := json.Unmarshal(body, &req); err != nil {
			return fmt.Errorf("read the render request: %w", err)
		}
		if req.Again == first {
			return errors.New("read the render request: a sandbox's first request brings its checkout, and only the later ones render from it again")
		}
		resp, objs := co.serve(ctx, br, req)
		if err := writeResponse(out, req, resp, objs); err != nil {
			return fmt.Errorf("write the render answer: %w", err)
		}
	}
}

// checkout is what a renderer keeps of its checkout between requests:
// the files of the archive, and whether they are written out at root.
type checkout struct {
	root    string
	files   *render.Files
	written bool
}

// serve answers req: the checkout placed (the first request's archive, or
// the files kept), then the render, and its objects.
func (co *checkout) serve(ctx context.Context, br *bufio.Reader, req request) (response, []map[string]any) {
	var resp response
	if !req.Again {
		co.root = req.Root
		if req.Archive {
			// The checkout follows the request; a bad one is the worker's
			// error, not the source's.
			var err error
			if co.files, err = readArchive(br, req.Root); err != nil {
				resp.Error = encodeError(fmt.Errorf("render %s: the sandbox's copy of the checkout: %w", req.Source.Path, err))
			}
		}
	}
	req.Root = co.root
	// The collector is off while a pooled renderer waits (faultInHeap).
	gcPercent := 100
	if req.Memory > 0 {
		// Collect harder near the sandbox's limit, so that a render that
		// fits is not killed for garbage it no longer holds.
		debug.SetMemoryLimit(req.Memory / 10 * 8)
		// And less often below it: garbage a render leaves costs nothing
		// once the sandbox is gone; a render of 1,000 files collected 4
		// times at the default.
		gcPercent = renderGCPercent
	}
	debug.SetGCPercent(gcPercent)
	if req.Probe || resp.Error != nil {
		return resp, nil
	}
	files, err := co.place(req)
	if err != nil {
		return response{Error: encodeError(fmt.Errorf("render %s: the sandbox's copy of the checkout: %w", req.Source.Path, err))}, nil
	}
	return renderResponse(ctx, req, files)
}

// place gives the files req's source renders from in memory (inMemory),
// or nil after it wrote the checkout out at its root, once, for the
// sources that read it there; nil too for a checkout mounted at its root.
func (co *checkout) place(req request) (*render.Files, error) {
	if co.files == nil {
		return nil, nil
	}
	if inMemory(req, co.files) {
		return co.files, nil
	}
	if !co.written {
		if err := co.files.WriteTo(); err != nil {
			return nil, err
		}
		co.written = true
	}
	return nil, nil
}

// readRequestLine reads the request: one line of JSON, or all of in when
// it has no newline; at most maxRequest bytes.
func readRequestLine(br *bufio.Reader) ([]byte, error) {
	var body []byte
	for {
		chunk, err := br.ReadSlice('\n')
		body = append(body, chunk...)
		if len(body) > maxRequest {
			return nil, fmt.Errorf("larger than %d bytes", maxRequest)
		}
		switch {
		case err == nil, err == io.EOF:
			return body, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// inMemory tells whether req's source renders from its checkout in
// memory: a directory source (Jsonnet included) of a worker with no
// plugins. Its render then makes no system call for the checkout's files,
// each a switch into gVisor's Sentry; Kustomize, Helm and plugins read the
// checkout written out at req.Root.
func inMemory(req request, files *render.Files) bool {
	if len(req.Plugins) > 0 {
		return false
	}
	typ, err := (&render.Renderer{Files: files}).SourceType(req.Root, req.Source)
	return err == nil && typ == render.SourceTypeDirectory
}

// renderResponse renders req, from files when it is not nil (the
// checkout in memory), else from the checkout at req.Root: the response,
// and the objects of a render that succeeded.
func renderResponse(ctx context.Context, req request, files *render.Files) (response, []map[string]any) {
	r := &render.Renderer{Limits: req.Limits, Capabilities: req.Capabilities, AllowRemoteBases: req.AllowRemoteBases,
		Kustomize: req.Kustomize,
		Plugins:   req.Plugins, RunPlugins: true, Files: files, EgressSocket: req.EgressSocket}
	if req.SOPSAgeKeys != "" {
		keys, err := sopsfile.ParseKeys([]byte(req.SOPSAgeKeys))
		if err != nil {
			return response{Error: encodeError(fmt.Errorf("render %s: the worker's age identities: %w", req.Source.Path, err))}, nil
		}
		r.SOPS = keys
	}
	res, err := r.Render(ctx, req.Root, req.Source, req.Options)
	if err != nil {
		return response{Error: encodeError(err)}, nil
	}
	objs := make([]map[string]any, 0, len(res.Objects))
	for _, obj := range res.Objects {
		objs = append(objs, obj.Object)
	}
	return response{SourceType: res.SourceType}, objs
}
