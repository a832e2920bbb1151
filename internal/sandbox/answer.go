package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/ferry-gitops/ferry/internal/render"
)

// A renderer's answer is one line: the response as JSON (its source type,
// or its error), and after it, on the same line, the rendered objects as
// JSON arrays of the byte lengths response.Parts gives, partObjects
// objects each. The renderer encodes the parts, and the worker decodes
// them, on every core at once: decoding 1,000 objects in one pass was
// 8-19 ms of a warm render's 80 in the worker, while its other core
// waited. Compact JSON has no newline, so the line ends after the last
// part.

// partObjects is how many objects an answer's part holds.
const partObjects = 250

// writeResponse writes resp and objs as one answer line; an object that
// does not encode is named in a typed error instead.
func writeResponse(out io.Writer, req request, resp response, objs []map[string]any) error {
	parts, err := encodeParts(objs)
	if err != nil {
		resp, parts = response{Error: encodeError(objectError(req, objs, err))}, nil
	}
	resp.Parts = make([]int, len(parts))
	size := 0
	for i, p := range parts {
		resp.Parts[i] = len(p)
		size += len(p)
	}
	head, err := json.Marshal(resp)
	if err != nil {
		return err
	}
	line := make([]byte, 0, len(head)+size+1)
	line = append(line, head...)
	for _, p := range parts {
		line = append(line, p...)
	}
	_, err = out.Write(append(line, '\n'))
	return err
}

// encodeParts encodes objs as JSON arrays of partObjects objects each.
func encodeParts(objs []map[string]any) ([][]byte, error) {
	n := (len(objs) + partObjects - 1) / partObjects
	parts, errs := make([][]byte, n), make([]error, n)
	onEveryCore(n, func(i int) {
		parts[i], errs[i] = json.Marshal(objs[i*partObjects : min((i+1)*partObjects, len(objs))])
	})
	return parts, firstError(errs)
}

// objectError names the first of objs that does not encode, for err, the
// answer's encoding error.
func objectError(req request, objs []map[string]any, err error) error {
	for _, obj := range objs {
		if _, oerr := json.Marshal(obj); oerr != nil {
			u := unstructured.Unstructured{Object: obj}
			return fmt.Errorf("render %s: encode %s %s: %w", req.Source.Path, u.GetKind(), u.GetName(), oerr)
		}
	}
	return fmt.Errorf("render %s: encode the answer: %w", req.Source.Path, err)
}

// decodeResponse decodes the renderer's answer line: the response, then
// its parts, each in one pass, on every core; utiljson keeps whole
// numbers int64, as the in-process decoding does.
func decodeResponse(appPath string, out []byte) (*render.Result, error) {
	var resp response
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&resp); err != nil {
		return nil, fmt.Errorf("render %s: the renderer's answer does not parse: %w", appPath, err)
	}
	if resp.Error != nil {
		return nil, resp.Error.decode()
	}
	rest := bytes.TrimRight(out[dec.InputOffset():], "\n")
	total := 0
	for _, n := range resp.Parts {
		total += n
	}
	if total != len(rest) {
		return nil, fmt.Errorf("render %s: the renderer's answer has %d bytes of objects, not the %d it names", appPath, len(rest), total)
	}
	parts, errs := make([][]map[string]any, len(resp.Parts)), make([]error, len(resp.Parts))
	offsets := make([]int, len(resp.Parts))
	for i := 1; i < len(resp.Parts); i++ {
		offsets[i] = offsets[i-1] + resp.Parts[i-1]
	}
	onEveryCore(len(resp.Parts), func(i int) {
		errs[i] = utiljson.Unmarshal(rest[offsets[i]:offsets[i]+resp.Parts[i]], &parts[i])
	})
	if err := firstError(errs); err != nil {
		return nil, fmt.Errorf("render %s: the renderer's answer does not parse: %w", appPath, err)
	}
	var objs []*unstructured.Unstructured
	for _, part := range parts {
		for _, m := range part {
			if m == nil {
				return nil, fmt.Errorf("render %s: object %d of the renderer's answer is null", appPath, len(objs))
			}
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return &render.Result{Objects: objs, SourceType: resp.SourceType}, nil
}

// onEveryCore runs do for 0…n-1, on as many goroutines as there are cores.
func onEveryCore(n int, do func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			do(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range workers {
		wg.Go(func() {
			for i := range next {
				do(i)
			}
		})
	}
	wg.Wait()
}

// firstError is the first of errs that is not nil: of many parts or files
// that failed, one says why.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
