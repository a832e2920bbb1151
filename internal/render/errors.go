package render

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ParseError is a manifest file that does not parse.
type ParseError struct {
	File string // path relative to the repository root
	Line int    // 1-based line in the file
	Doc  int    // 1-based YAML document, when the parser gave no line
	Msg  string
	Err  error
}

func (e *ParseError) Error() string {
	if e.Doc > 0 {
		return fmt.Sprintf("render %s: line %d (document %d): %s", e.File, e.Line, e.Doc, e.Msg)
	}
	return fmt.Sprintf("render %s: line %d: %s", e.File, e.Line, e.Msg)
}

func (e *ParseError) Unwrap() error { return e.Err }

// LimitError says that an app path is larger than a Limits field allows.
type LimitError struct {
	Path string // the file or app path, relative to the repository root
	// What is the limit: "files", "file size", "total size", "render
	// time", "memory", "output size", "objects", "rendered size",
	// "archive size", "checkout size", "checkout file size".
	What  string
	Limit int64 // a count, bytes, or nanoseconds for "render time"
	// Flag is the worker setting that raises the limit, when the message
	// should name one (e.g. "--render-memory").
	Flag string
}

func (e *LimitError) Error() string {
	switch e.What {
	case "files":
		return fmt.Sprintf("render %s: more than %d files under the app path; point the Application at a smaller directory or narrow directory.include", e.Path, e.Limit)
	case "render time":
		msg := fmt.Sprintf("render %s: gave up after %s: the render took longer than the worker allows; simplify the chart or kustomization, or split the Application", e.Path, time.Duration(e.Limit))
		if e.Flag != "" {
			msg += ", or raise it with " + e.Flag
		}
		return msg
	case "objects":
		return fmt.Sprintf("render %s: more than %d objects, the most one source may render; split the Application, or %s", e.Path, e.Limit, e.raise())
	case "rendered size":
		return fmt.Sprintf("render %s: the rendered objects take more than %s as JSON, the most one source may render; split the Application, or %s", e.Path, bytesString(e.Limit), e.raise())
	case "archive size":
		return fmt.Sprintf("render %s: the chart's archived subcharts (charts/*.tgz) inflate to more than %s; vendor smaller charts, or %s", e.Path, bytesString(e.Limit), e.raise())
	case "memory":
		return fmt.Sprintf("render %s: the render needed more than %s of memory, the limit of one render; simplify the chart or kustomization, or %s", e.Path, bytesString(e.Limit), e.raise())
	case "output size":
		return fmt.Sprintf("render %s: the rendered manifests are larger than %s; split the Application", e.Path, bytesString(e.Limit))
	case "file size":
		return fmt.Sprintf("render %s: file larger than the %s limit for one manifest file", e.Path, bytesString(e.Limit))
	default:
		return fmt.Sprintf("render %s: manifest files add up to more than %s; split the Application or narrow directory.include", e.Path, bytesString(e.Limit))
	}
}

func (e *LimitError) raise() string {
	if e.Flag != "" {
		return "raise it with " + e.Flag
	}
	return "raise the worker's limit"
}

// UnsupportedError says that a source needs something Ferry does not
// render: Jsonnet files, Kustomize's helmCharts, remote Kustomize bases the
// worker does not allow.
type UnsupportedError struct {
	Path   string
	What   string // e.g. "Jsonnet files"
	Reason string // what to do instead
	// Verb replaces "are not supported yet", e.g. "are not allowed on this
	// worker".
	Verb string
}

func (e *UnsupportedError) Error() string {
	verb := e.Verb
	if verb == "" {
		verb = "are not supported yet"
	}
	msg := fmt.Sprintf("render %s: %s %s", e.Path, e.What, verb)
	if e.Reason != "" {
		msg += " (" + e.Reason + ")"
	}
	return msg
}

// IsUserError reports whether err is a problem in the repository or the
// Application (bad manifests, a path outside the repository, a limit, an
// unsupported source) that retrying cannot fix.
func IsUserError(err error) bool {
	var parse *ParseError
	var limit *LimitError
	var unsupported *UnsupportedError
	var source *SourceError
	var manifest *ManifestError
	var tool *ToolError
	return errors.As(err, &parse) || errors.As(err, &limit) || errors.As(err, &unsupported) ||
		errors.As(err, &source) || errors.As(err, &manifest) || errors.As(err, &tool)
}

// ToolError is Kustomize or Helm refusing a source: a bad kustomization,
// chart, template or values. Their messages name the file and, for YAML
// and templates, the line; paths in them are relative to the repository.
type ToolError struct {
	Tool string // "kustomize" or "helm"
	Path string // the app path
	Msg  string // the tool's message, checkout paths made relative
	Err  error
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("render %s: %s: %s", e.Path, e.Tool, e.Msg)
}

func (e *ToolError) Unwrap() error { return e.Err }

// toolError wraps err from tool, writing the checkout's paths (each of
// roots, real or as given) relative to the repository so that messages do
// not depend on where a worker keeps its trees.
func toolError(tool, appPath string, err error, roots ...string) error {
	msg := err.Error()
	for _, root := range roots {
		if root == "" {
			continue
		}
		root = strings.TrimSuffix(root, "/")
		msg = strings.ReplaceAll(msg, root+"/", "")
		msg = strings.ReplaceAll(msg, root, ".")
	}
	return &ToolError{Tool: tool, Path: appPath, Msg: redactContents(msg), Err: err}
}

// SourceError is an Application source that cannot be rendered as written:
// an app path that is absolute, leaves the repository or does not exist, a
// symlink pointing outside the repository, or a bad include/exclude glob.
type SourceError struct {
	Path string
	Msg  string
	Err  error // the cause, when there is one to test for
}

func (e *SourceError) Error() string { return fmt.Sprintf("render %s: %s", e.Path, e.Msg) }

func (e *SourceError) Unwrap() error { return e.Err }

// ManifestError is a document that parses but is not a Kubernetes object.
type ManifestError struct {
	File string
	Line int // 0 when unknown
	Doc  int // 0 for JSON files
	Err  error
}

func (e *ManifestError) Error() string {
	switch {
	case e.Line > 0 && e.Doc > 0:
		return fmt.Sprintf("render %s: line %d (document %d): %v", e.File, e.Line, e.Doc, e.Err)
	case e.Line > 0:
		return fmt.Sprintf("render %s: line %d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("render %s: %v", e.File, e.Err)
}

func (e *ManifestError) Unwrap() error { return e.Err }

func bytesString(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
