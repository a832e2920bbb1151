package sandbox

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ferry-gitops/ferry/internal/render"
)

// TestErrorsCrossTheSandbox: every typed error of package render comes
// back from the renderer process with its type, its message and its
// classification (render.IsUserError); any other error stays retryable.
func TestErrorsCrossTheSandbox(t *testing.T) {
	cause := errors.New("yaml: line 3: mapping values are not allowed in this context")
	for _, err := range []error{
		&render.ParseError{File: "app/a.yaml", Line: 3, Doc: 2, Msg: "mapping values are not allowed", Err: cause},
		&render.LimitError{Path: "app", What: "render time", Limit: 90e9},
		&render.LimitError{Path: "app", What: "memory", Limit: 1 << 30, Flag: "--render-memory"},
		&render.UnsupportedError{Path: "app", What: "remote bases", Reason: "pin them", Verb: "are not allowed on this worker"},
		&render.SourceError{Path: "app", Msg: "the path must not contain \"..\"", Err: cause},
		&render.ManifestError{File: "app/a.yaml", Line: 4, Doc: 1, Err: cause},
		&render.ToolError{Tool: "helm", Path: "chart", Msg: "template: cm.yaml:3: function \"nope\" not defined", Err: cause},
		fmt.Errorf("render app: %w", &render.ToolError{Tool: "kustomize", Path: "app", Msg: "no such file"}),
		errors.New("render app: read /src/app: input/output error"),
	} {
		got := encodeError(err).decode()
		if got.Error() != err.Error() || render.IsUserError(got) != render.IsUserError(err) {
			t.Errorf("%T %q came back as %T %q (user error %v, want %v)", err, err, got, got, render.IsUserError(got), render.IsUserError(err))
		}
	}
}
