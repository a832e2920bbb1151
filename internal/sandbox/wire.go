package sandbox

import (
	"errors"
	"fmt"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/render"
)

// request is what a Renderer sends its renderer process on stdin.
type request struct {
	// Root is the checkout inside the sandbox.
	Root    string         `json:"root"`
	Source  app.Source     `json:"source"`
	Options render.Options `json:"options"`
	// Limits, Capabilities, AllowRemoteBases and Kustomize are the worker's
	// render.Renderer.
	Limits           render.Limits           `json:"limits"`
	Capabilities     render.Capabilities     `json:"capabilities"`
	AllowRemoteBases bool                    `json:"allowRemoteBases,omitempty"`
	Kustomize        render.KustomizeOptions `json:"kustomize,omitempty"`
	// Plugins are the worker's config-management plugins; the renderer
	// process runs them (render.Renderer.RunPlugins).
	Plugins []*render.Plugin `json:"plugins,omitempty"`
	// SOPSAgeKeys are the worker's age identities (render.Renderer.SOPS,
	// sopsfile.Keys.Identities), for the SOPS-encrypted files of the
	// source: sent on the renderer's standard input, never in its
	// arguments or environment, and not to a plugin's sandbox.
	SOPSAgeKeys string `json:"sopsAgeKeys,omitempty"`
	// EgressSocket is the socket of the plugin's egress proxy in the
	// sandbox (render.Renderer.EgressSocket); empty: none.
	EgressSocket string `json:"egressSocket,omitempty"`
	// Memory is the sandbox's memory limit: the renderer's Go runtime
	// collects garbage harder as it nears it.
	Memory int64 `json:"memory,omitempty"`
	// Archive says that the checkout follows the request on stdin, as a
	// tar archive the renderer unpacks into Root (archive.go); else the
	// checkout is mounted at Root.
	Archive bool `json:"archive,omitempty"`
	// Again says that the source renders from the checkout of the
	// sandbox's earlier requests (a sandbox serves renders of one checkout
	// only, renderer_reuse.go): nothing follows the request, and Root is
	// the first request's.
	Again bool `json:"again,omitempty"`
	// Probe asks for an empty answer: the sandbox works.
	Probe bool `json:"probe,omitempty"`
}

// response is the head of what the renderer process writes on stdout:
// the source type or the error of the render, and the byte lengths of the
// parts of the objects, which follow it on the same line (answer.go).
type response struct {
	SourceType string     `json:"sourceType,omitempty"`
	Parts      []int      `json:"parts,omitempty"`
	Error      *wireError `json:"error,omitempty"`
}

// Kinds of wireError: one per typed error of package render, so that the
// worker can still tell a user's error (render.IsUserError) from its own.
const (
	kindParse       = "parse"
	kindLimit       = "limit"
	kindUnsupported = "unsupported"
	kindSource      = "source"
	kindManifest    = "manifest"
	kindTool        = "tool"
	kindOther       = "other"
)

// wireError is a render error as it crosses the sandbox: the fields of
// the render error of its Kind, its cause reduced to a message.
type wireError struct {
	Kind   string `json:"kind"`
	Msg    string `json:"msg,omitempty"`
	File   string `json:"file,omitempty"`
	Path   string `json:"path,omitempty"`
	Line   int    `json:"line,omitempty"`
	Doc    int    `json:"doc,omitempty"`
	What   string `json:"what,omitempty"`
	Limit  int64  `json:"limit,omitempty"`
	Reason string `json:"reason,omitempty"`
	Verb   string `json:"verb,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Flag   string `json:"flag,omitempty"`
	Cause  string `json:"cause,omitempty"`
	// Text is the whole message, for an error that wraps the typed one.
	Text string `json:"text"`
}

// encodeError gives err's wire form; errors that are not render's own
// keep only their message, and stay retryable.
func encodeError(err error) *wireError {
	e := typedError(err)
	e.Text = err.Error()
	return e
}

func typedError(err error) *wireError {
	var (
		parse       *render.ParseError
		limit       *render.LimitError
		unsupported *render.UnsupportedError
		source      *render.SourceError
		manifest    *render.ManifestError
		tool        *render.ToolError
	)
	switch {
	case errors.As(err, &parse):
		return &wireError{Kind: kindParse, File: parse.File, Line: parse.Line, Doc: parse.Doc, Msg: parse.Msg, Cause: causeOf(parse.Err)}
	case errors.As(err, &limit):
		return &wireError{Kind: kindLimit, Path: limit.Path, What: limit.What, Limit: limit.Limit, Flag: limit.Flag}
	case errors.As(err, &unsupported):
		return &wireError{Kind: kindUnsupported, Path: unsupported.Path, What: unsupported.What, Reason: unsupported.Reason, Verb: unsupported.Verb}
	case errors.As(err, &source):
		return &wireError{Kind: kindSource, Path: source.Path, Msg: source.Msg, Cause: causeOf(source.Err)}
	case errors.As(err, &manifest):
		return &wireError{Kind: kindManifest, File: manifest.File, Line: manifest.Line, Doc: manifest.Doc, Cause: causeOf(manifest.Err)}
	case errors.As(err, &tool):
		return &wireError{Kind: kindTool, Tool: tool.Tool, Path: tool.Path, Msg: tool.Msg, Cause: causeOf(tool.Err)}
	}
	return &wireError{Kind: kindOther, Msg: err.Error()}
}

// decode gives the render error e stands for, with the same message as
// the one the renderer process had.
func (e *wireError) decode() error {
	err := e.typed()
	if e.Text != "" && e.Text != err.Error() {
		return &wrapped{text: e.Text, err: err}
	}
	return err
}

// wrapped is a typed render error inside a message that adds to it.
type wrapped struct {
	text string
	err  error
}

func (w *wrapped) Error() string { return w.text }
func (w *wrapped) Unwrap() error { return w.err }

func (e *wireError) typed() error {
	cause := func() error {
		if e.Cause == "" {
			return nil
		}
		return errors.New(e.Cause)
	}
	switch e.Kind {
	case kindParse:
		return &render.ParseError{File: e.File, Line: e.Line, Doc: e.Doc, Msg: e.Msg, Err: cause()}
	case kindLimit:
		return &render.LimitError{Path: e.Path, What: e.What, Limit: e.Limit, Flag: e.Flag}
	case kindUnsupported:
		return &render.UnsupportedError{Path: e.Path, What: e.What, Reason: e.Reason, Verb: e.Verb}
	case kindSource:
		return &render.SourceError{Path: e.Path, Msg: e.Msg, Err: cause()}
	case kindManifest:
		return &render.ManifestError{File: e.File, Line: e.Line, Doc: e.Doc, Err: cause()}
	case kindTool:
		return &render.ToolError{Tool: e.Tool, Path: e.Path, Msg: e.Msg, Err: cause()}
	}
	return fmt.Errorf("%s", e.Msg)
}

func causeOf(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
