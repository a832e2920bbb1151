package sandbox

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/ferry-gitops/ferry/internal/app"
)

// An answer of several parts decodes to the objects in their order, with
// whole numbers kept int64; an answer cut short, or with an object that
// does not encode, is an error that says so.
func TestAnswerParts(t *testing.T) {
	var objs []map[string]any
	for i := range 2*partObjects + 7 {
		objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i)}, "data": map[string]any{"n": int64(i)}})
	}
	var buf bytes.Buffer
	if err := writeResponse(&buf, request{}, response{SourceType: "Directory"}, objs); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 1 {
		t.Fatalf("the answer has %d newlines, want one at its end", n)
	}
	res, err := decodeResponse("app", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != len(objs) || res.SourceType != "Directory" {
		t.Fatalf("decoded %d objects of type %q, want %d of Directory", len(res.Objects), res.SourceType, len(objs))
	}
	for i, o := range res.Objects {
		if o.GetName() != fmt.Sprintf("cm-%d", i) || o.Object["data"].(map[string]any)["n"] != int64(i) {
			t.Fatalf("object %d is %s with data %v", i, o.GetName(), o.Object["data"])
		}
	}

	cut := buf.Bytes()[:buf.Len()-40]
	if _, err := decodeResponse("app", cut); err == nil || !strings.Contains(err.Error(), "render app: the renderer's answer has") {
		t.Fatalf("a cut answer: %v", err)
	}

	objs[300]["data"] = map[string]any{"bad": make(chan int)}
	buf.Reset()
	if err := writeResponse(&buf, request{Source: app.Source{Path: "app"}}, response{SourceType: "Directory"}, objs); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeResponse("app", buf.Bytes()); err == nil || !strings.Contains(err.Error(), "encode ConfigMap cm-300") {
		t.Fatalf("an object that does not encode: %v", err)
	}
}
