package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// yamlDoc is one document of a YAML stream and the line it starts on.
type yamlDoc struct {
	index int // 1-based position in the file
	line  int // 1-based line of the document's first line
	data  []byte
}

// splitYAML cuts a YAML stream at "---" lines (which may carry a comment)
// and "..." lines, as kubectl does, remembering where each document starts
// so that errors can name the line in the file.
func splitYAML(data []byte) []yamlDoc {
	var docs []yamlDoc
	cur := yamlDoc{index: 1, line: 1}
	var buf bytes.Buffer
	flush := func(nextLine int) {
		cur.data = append([]byte(nil), buf.Bytes()...)
		docs = append(docs, cur)
		buf.Reset()
		cur = yamlDoc{index: cur.index + 1, line: nextLine}
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, line := range lines {
		lineNo := i + 1
		trimmed := strings.TrimRight(string(line), " \t\r\n")
		switch {
		case trimmed == "---" || strings.HasPrefix(trimmed, "--- #") || strings.HasPrefix(trimmed, "---\t#"):
			if lineNo > 1 || buf.Len() > 0 {
				flush(lineNo + 1)
			} else {
				cur.line = lineNo + 1
			}
		case trimmed == "...":
			flush(lineNo + 1)
		case strings.HasPrefix(trimmed, "--- "):
			// "--- key: value": the rest of the line opens the next document.
			flush(lineNo)
			buf.WriteString(strings.TrimLeft(strings.TrimPrefix(string(line), "---"), " \t"))
		default:
			buf.Write(line)
		}
	}
	flush(0)
	return docs
}

// yamlLine finds "line N" in a YAML parser's message.
var yamlLine = regexp.MustCompile(`^(?:error converting YAML to JSON: )?(?:yaml: )?line (\d+): (.*)$`)

// decodeYAML parses a (multi-document) YAML manifest file; name is the
// file's path as users know it.
func decodeYAML(name string, data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range splitYAML(data) {
		j, err := yaml.YAMLToJSON(doc.data)
		if err != nil {
			return nil, yamlError(name, doc, err)
		}
		objs, err := toObjects(j)
		if err != nil {
			return nil, &ManifestError{File: name, Line: doc.line, Doc: doc.index, Err: err}
		}
		out = append(out, objs...)
	}
	return out, nil
}

func yamlError(name string, doc yamlDoc, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &ParseError{File: name, Line: doc.line + n - 1, Msg: redactContents(m[2]), Err: err}
	}
	msg = redactContents(strings.TrimPrefix(msg, "error converting YAML to JSON: "))
	return &ParseError{File: name, Line: doc.line, Doc: doc.index, Msg: msg, Err: err}
}

// decodeJSON parses a .json manifest file: one object, or a List.
func decodeJSON(name string, data []byte) ([]*unstructured.Unstructured, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(data, new(json.RawMessage)); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, &ParseError{File: name, Line: lineAt(data, syn.Offset), Msg: syn.Error(), Err: err}
		}
		return nil, &ParseError{File: name, Line: 1, Msg: err.Error(), Err: err}
	}
	objs, err := toObjects(data)
	if err != nil {
		return nil, &ManifestError{File: name, Err: err}
	}
	return objs, nil
}

func lineAt(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// toObjects turns one JSON document into Kubernetes objects: none for
// null, the items of a List, or the object itself. Numbers become int64
// where they are whole, as the API machinery expects.
func toObjects(j []byte) ([]*unstructured.Unstructured, error) {
	if t := bytes.TrimSpace(j); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var v any
	if err := utiljson.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a Kubernetes object, found %s", jsonKind(v))
	}
	if err := checkObject(m); err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: m}
	items, isList := m["items"].([]any)
	if !strings.HasSuffix(obj.GetKind(), "List") || !isList {
		return []*unstructured.Unstructured{obj}, nil
	}
	out := make([]*unstructured.Unstructured, 0, len(items))
	for i, item := range items {
		im, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s item %d: expected a Kubernetes object, found %s", obj.GetKind(), i, jsonKind(item))
		}
		if err := checkObject(im); err != nil {
			return nil, fmt.Errorf("%s item %d: %w", obj.GetKind(), i, err)
		}
		out = append(out, &unstructured.Unstructured{Object: im})
	}
	return out, nil
}

// checkObject requires apiVersion and kind, as Argo CD and kubectl do.
func checkObject(m map[string]any) error {
	var missing []string
	for _, field := range []string{"apiVersion", "kind"} {
		if s, _ := m[field].(string); s == "" {
			missing = append(missing, field)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("not a Kubernetes object: no %s; every document in a manifest file needs apiVersion and kind (exclude other YAML files with directory.exclude)", strings.Join(missing, " or "))
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("a scalar (%v)", v)
	}
}
