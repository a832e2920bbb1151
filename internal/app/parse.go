package app

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// ErrNotOneApplication is wrapped by Parse's error when the input holds no
// document, several documents, or a List: Ferry reads one Application per
// file so that "apply -f" maps onto exactly one workflow.
var ErrNotOneApplication = errors.New("expected exactly one Application")

// Parse reads one Application from YAML or JSON.
//
// It is strict: an unknown field, a field Ferry does not support yet, or a
// value of the wrong type is refused, and every such problem is reported at
// once as a *ValidationError naming the field path (spec.sources,
// spec.destinations[1].name). A YAML or JSON syntax error names its line.
// Input with no document, several documents or a List is refused with an
// error wrapping ErrNotOneApplication.
//
// Parse does not apply defaults and does not check values (repoURL forms,
// regions, sync options): call Validate for that, or Read for both at once,
// and read defaults through the accessor methods (Source.Revision,
// Application.PollInterval, ...).
func Parse(data []byte) (*Application, error) {
	a, errs, _, err := parse(data)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		return nil, &ValidationError{App: a.Metadata.Name, Errors: errs}
	}
	return a, nil
}

// Read is Parse and Validate in one, as `ferry app apply` reads a file:
// every problem of the file at once, the unknown, unsupported and mistyped
// fields together with the wrong values of the fields that are left. It
// returns the Application when the file holds one, even with problems
// (their fields left out), and nil or a *ValidationError listing them.
func Read(data []byte, opts ValidateOptions) (*Application, error) {
	a, errs, leftOut, err := parse(data)
	if err != nil {
		return nil, err
	}
	var ve *ValidationError
	if err := Validate(a, opts); errors.As(err, &ve) {
		for _, fe := range ve.Errors {
			// A field left out for its parse error is not also missing.
			if !slices.ContainsFunc(leftOut, func(p string) bool { return under(fe.Field, p) }) {
				errs = append(errs, fe)
			}
		}
	} else if err != nil {
		return a, err
	}
	if len(errs) > 0 {
		return a, &ValidationError{App: a.Metadata.Name, Errors: errs}
	}
	return a, nil
}

// under tells whether field is path or inside it.
func under(field, path string) bool {
	rest, ok := strings.CutPrefix(field, path)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// parse reads one Application and lists its field problems, with the
// Application decoded from what is left once they are removed, and the
// fields left out.
func parse(data []byte) (*Application, []FieldError, []string, error) {
	_, obj, err := readOneObject(data, applicationDoc)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := checkKind(obj); err != nil {
		return nil, nil, nil, err
	}
	moved, errs := readSources(obj)
	var leftOut []string
	schemaErrs := appSchema.check(obj, reflect.TypeFor[Application](), "")
	if moved {
		renameSourceFields(schemaErrs)
	}
	errs = append(errs, schemaErrs...)
	for _, fe := range errs {
		leftOut = append(leftOut, fe.Field)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parse Application %q: %w", nameOf(obj), err)
	}
	a := &Application{sourceFromSources: moved}
	if err := json.Unmarshal(raw, a); err != nil {
		// The schema walk has removed every value that does not match its
		// field's type, so this is a bug in the walk rather than in the
		// user's file.
		return nil, nil, nil, fmt.Errorf("parse Application %q: %w", nameOf(obj), err)
	}
	return a, errs, leftOut, nil
}

// docKind is what a file is read as: its kind for messages, and the error
// wrapped when it holds no or several objects.
type docKind struct {
	noun      string
	errNotOne error
}

var applicationDoc = docKind{noun: Kind, errNotOne: ErrNotOneApplication}

// readOneObject reads exactly one JSON or YAML object and returns it as
// JSON and decoded, with numbers kept as json.Number so that the schema walk
// tells 1 from 1.5.
func readOneObject(data []byte, dk docKind) ([]byte, map[string]any, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var raw []byte
	var err error
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		raw, err = oneJSONDocument(data, dk)
		if err != nil && !errors.Is(err, dk.errNotOne) {
			// Perhaps YAML in flow style ({apiVersion: ...}); if not, the
			// JSON error is the one that helps.
			if fromYAML, yerr := oneYAMLDocument(data, dk); yerr == nil {
				raw, err = fromYAML, nil
			}
		}
	} else {
		raw, err = oneYAMLDocument(data, dk)
	}
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, nil, fmt.Errorf("parse %s: %w", dk.noun, err)
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("parse %s: %w: found %s at the top level; write an object with apiVersion, kind, metadata and spec",
			dk.noun, dk.errNotOne, describeJSON(generic))
	}
	return raw, obj, nil
}

// checkKind refuses Lists and other kinds before the field walk, which would
// otherwise bury the real mistake under a heap of "unknown field" errors.
func checkKind(obj map[string]any) error {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	if _, hasItems := obj["items"]; strings.HasSuffix(kind, "List") || (kind == "" && hasItems) {
		n := 0
		if items, ok := obj["items"].([]any); ok {
			n = len(items)
		}
		return fmt.Errorf("parse Application: %w: found a %s of %d objects; Ferry reads one Application per file: write each item to a file of its own",
			ErrNotOneApplication, cmp.Or(kind, "list"), n)
	}
	if kind == "ApplicationSet" {
		return &ValidationError{Kind: "ApplicationSet", App: nameOf(obj), Errors: []FieldError{{Field: "kind",
			Message: "ApplicationSet is not supported by ferry app apply: apply it with `ferry appset apply -f FILE`"}}}
	}
	if kind == ProjectKind {
		return &ValidationError{Kind: ProjectKind, App: nameOf(obj), Errors: []FieldError{{Field: "kind",
			Message: "an AppProject is not an Application: apply it with `ferry project apply -f FILE`"}}}
	}
	if kind != "" && kind != Kind {
		return &ValidationError{App: nameOf(obj), Errors: []FieldError{{Field: "kind",
			Message: fmt.Sprintf("found %s (%s), not an Application: Ferry reads %s %s resources only", kind, apiVersion, APIVersion, Kind)}}}
	}
	return nil
}

func nameOf(obj map[string]any) string {
	if md, ok := obj["metadata"].(map[string]any); ok {
		if name, ok := md["name"].(string); ok {
			return name
		}
	}
	return ""
}

// oneJSONDocument returns data if it is exactly one JSON value.
func oneJSONDocument(data []byte, dk docKind) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return nil, jsonSyntaxError(data, dec, err, dk)
	}
	var next json.RawMessage
	switch err := dec.Decode(&next); {
	case err == io.EOF:
	case err != nil:
		return nil, jsonSyntaxError(data, dec, err, dk)
	default:
		return nil, fmt.Errorf("parse %s: %w: found several JSON values; Ferry reads one %s per file: write each to a file of its own",
			dk.noun, dk.errNotOne, dk.noun)
	}
	if bytes.HasPrefix(bytes.TrimSpace(first), []byte("[")) {
		var items []any
		_ = json.Unmarshal(first, &items)
		return nil, fmt.Errorf("parse %s: %w: found a JSON array of %d objects; Ferry reads one %s per file: write each item to a file of its own",
			dk.noun, dk.errNotOne, len(items), dk.noun)
	}
	return first, nil
}

func jsonSyntaxError(data []byte, dec *json.Decoder, err error, dk docKind) error {
	offset := dec.InputOffset()
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		offset = syn.Offset
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("parse %s: %w: the input is empty", dk.noun, dk.errNotOne)
	}
	line := 1 + bytes.Count(data[:min(int(offset), len(data))], []byte("\n"))
	return fmt.Errorf("parse %s: JSON syntax error on line %d: %v: fix the file", dk.noun, line, err)
}

// yamlDocument is one document of a YAML stream and the line it starts on.
type yamlDocument struct {
	line int
	text []byte
}

// splitYAML cuts a YAML stream at its document markers ("---" or "..." at
// the start of a line), as kubectl does. A marker can only be a document
// boundary in YAML, even inside a block scalar, so cutting by lines is exact.
// A "---" line stays at the head of its document: it may carry a comment or
// a tag.
func splitYAML(data []byte) []yamlDocument {
	var docs []yamlDocument
	cur := yamlDocument{line: 1}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, l := range lines {
		trimmed := bytes.TrimRight(l, "\r\n")
		isStart := bytes.HasPrefix(trimmed, []byte("---")) && (len(trimmed) == 3 || trimmed[3] == ' ' || trimmed[3] == '\t')
		isEnd := bytes.Equal(bytes.TrimRight(trimmed, " \t"), []byte("..."))
		if isStart || isEnd {
			docs = append(docs, cur)
			cur = yamlDocument{line: i + 1}
			if isEnd {
				cur.line = i + 2
				continue
			}
		}
		cur.text = append(cur.text, l...)
	}
	return append(docs, cur)
}

var yamlLineRE = regexp.MustCompile(`line (\d+): ?(.*)`)

// oneYAMLDocument converts a YAML stream holding exactly one non-empty
// document to JSON.
func oneYAMLDocument(data []byte, dk docKind) ([]byte, error) {
	var found []int
	var out []byte
	for _, doc := range splitYAML(data) {
		j, err := yaml.YAMLToJSONStrict(doc.text)
		if err != nil {
			msg := err.Error()
			if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
				n, _ := strconv.Atoi(m[1])
				return nil, fmt.Errorf("parse %s: YAML syntax error on line %d: %s: fix the file", dk.noun, doc.line+n-1, m[2])
			}
			return nil, fmt.Errorf("parse %s: YAML syntax error in the document starting on line %d: %s: fix the file", dk.noun, doc.line, msg)
		}
		if string(bytes.TrimSpace(j)) == "null" {
			continue // empty, or comments only
		}
		found = append(found, doc.line)
		out = j
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("parse %s: %w: the input holds no YAML document", dk.noun, dk.errNotOne)
	case 1:
		return out, nil
	}
	lines := make([]string, len(found))
	for i, l := range found {
		lines[i] = strconv.Itoa(l)
	}
	return nil, fmt.Errorf("parse %s: %w: found %d YAML documents (starting on lines %s); Ferry reads one %s per file: write each to a file of its own",
		dk.noun, dk.errNotOne, len(found), strings.Join(lines, ", "), dk.noun)
}

func describeJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return fmt.Sprintf("a list of %d items", len(v))
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("the boolean %t", v)
	case json.Number:
		return fmt.Sprintf("the number %s", v)
	}
	return fmt.Sprintf("%T", v)
}
