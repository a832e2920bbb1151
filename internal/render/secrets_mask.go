package render

import (
	"context"
	"errors"

	"github.com/ferry-gitops/ferry/internal/app"
	"github.com/ferry-gitops/ferry/internal/secretmask"
)

// Every error a render returns goes through maskError, with the secret
// values the render could meet (secretValues): whatever Kustomize, Helm,
// a plugin or the YAML parsers put in their messages, no value of a
// Secret leaves the renderer, in the worker's process or in a sandbox
// (whose answer carries the masked error, and whose worker masks again
// with what it finds in the checkout: sandbox.Renderer). The typed errors
// keep their type, so that IsUserError and the sandbox's wire still tell
// them apart, with every field masked.

// MaskError masks in err every secret value a render of src from the
// checkout at root can meet: for the errors of a render that ran
// elsewhere (a sandbox), whose output is not known here.
func (r *Renderer) MaskError(root string, src app.Source, opts Options, err error) error {
	if err == nil {
		return nil
	}
	t, _ := r.detect(context.Background(), root, src, opts)
	return maskError(r.secretValues(root, src, opts, t), err)
}

// maskError gives err with every form of every value of s masked.
func maskError(s *secretmask.Set, err error) error {
	if err == nil || s.Len() == 0 {
		return err
	}
	text := s.Mask(err.Error())
	typed := maskTyped(s, err)
	switch {
	case typed != nil && typed.Error() == text:
		return typed
	case typed != nil:
		return &maskedError{text: text, err: typed}
	case text == err.Error():
		return err
	}
	return &maskedError{text: text, err: err}
}

// maskedError is an error whose message is masked. It unwraps to the
// masked copy of a typed render error, or to the original error, so that
// errors.Is (a context's end) still answers; what it unwraps to is never
// shown by Ferry, which prints and sends only Error().
type maskedError struct {
	text string
	err  error
}

func (e *maskedError) Error() string { return e.text }
func (e *maskedError) Unwrap() error { return e.err }

// maskCause masks a typed error's cause.
func maskCause(s *secretmask.Set, err error) error {
	if err == nil {
		return nil
	}
	if text := s.Mask(err.Error()); text != err.Error() {
		return &maskedError{text: text, err: err}
	}
	return err
}

// maskTyped is a copy of the typed render error in err, every field
// masked, or nil when err holds none.
func maskTyped(s *secretmask.Set, err error) error {
	var (
		parse       *ParseError
		limit       *LimitError
		unsupported *UnsupportedError
		source      *SourceError
		manifest    *ManifestError
		tool        *ToolError
	)
	quiet := s.Replace
	switch {
	case errors.As(err, &parse):
		return &ParseError{File: quiet(parse.File), Line: parse.Line, Doc: parse.Doc, Msg: s.Mask(parse.Msg), Err: maskCause(s, parse.Err)}
	case errors.As(err, &limit):
		c := *limit
		c.Path = quiet(c.Path)
		return &c
	case errors.As(err, &unsupported):
		return &UnsupportedError{Path: quiet(unsupported.Path), What: quiet(unsupported.What), Reason: s.Mask(unsupported.Reason), Verb: unsupported.Verb}
	case errors.As(err, &source):
		return &SourceError{Path: quiet(source.Path), Msg: s.Mask(source.Msg), Err: maskCause(s, source.Err)}
	case errors.As(err, &manifest):
		return &ManifestError{File: quiet(manifest.File), Line: manifest.Line, Doc: manifest.Doc, Err: maskCause(s, manifest.Err)}
	case errors.As(err, &tool):
		return &ToolError{Tool: tool.Tool, Path: quiet(tool.Path), Msg: s.Mask(tool.Msg), Err: maskCause(s, tool.Err)}
	}
	return nil
}
